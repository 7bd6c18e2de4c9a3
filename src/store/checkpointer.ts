/**
 * WAL checkpoints for the embedded SQLite file, off the event loop. The
 * driver is synchronous, so a checkpoint run by the service's own connection
 * (SQLite does one every 1000 pages by default) stalls every request for the
 * length of a copy and an fsync: at 500 deliveries/s that was the whole p99.
 * A worker thread with its own connection runs PASSIVE checkpoints instead,
 * which never block the writer.
 */
import { Worker } from "node:worker_threads";

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 1000 });
const timer = setInterval(() => {
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch (err) { parentPort.postMessage(String(err)); }
}, workerData.everyMs);
parentPort.on("message", (m) => { if (m === "stop") { clearInterval(timer); db.close(); process.exit(0); } });
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, onError: (message: string) => void, everyMs = 250): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // The source is CommonJS; flags such as --input-type=module must not reach it.
    execArgv: [],
    workerData: { path, everyMs, driver: import.meta.resolve("better-sqlite3").replace(/^file:\/\//, "") },
  });
  worker.unref();
  worker.on("message", (m: string) => onError(m));
  worker.on("error", (err) => onError(String(err)));
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        worker.once("exit", () => resolve());
        // Unreferenced while it runs, so it never keeps the process up; but
        // waiting for it to stop needs a reference, or the process would exit
        // with this promise still pending (and whatever awaits it undone).
        worker.ref();
        worker.postMessage("stop");
        setTimeout(() => void worker.terminate(), 2000).unref();
      }),
  };
}
