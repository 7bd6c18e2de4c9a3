// How every benchmark process runs and ends: `main` answers the exit code;
// on a signal, a thrown error or `--max-minutes` running out, the temporary
// files and databases the run created are removed before it exits (database
// drops get at most 10 s).
import os from "node:os";
import { cleanupAllSync, sleep } from "./ingest/targets.js";

export function runBench(
  name: string,
  main: () => Promise<number>,
  opts: { deadlineAt: () => number; dropDatabases: () => Promise<void>; explain?: (e: unknown) => string | null },
): void {
  let dying = false;
  const die = (code: number, why: string): void => {
    if (dying) return;
    dying = true;
    process.stderr.write(`bench:${name}: ${why}, cleaning up\n`);
    cleanupAllSync();
    void Promise.race([opts.dropDatabases(), sleep(10_000)]).finally(() => process.exit(code));
  };
  process.on("exit", cleanupAllSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.on(signal, () => die(128 + (os.constants.signals[signal] ?? 0), signal));
  const hardLimit = setInterval(() => {
    if (Date.now() > opts.deadlineAt()) die(3, "--max-minutes ran out");
  }, 1000);
  hardLimit.unref();

  main().then(
    async (code) => {
      cleanupAllSync();
      await opts.dropDatabases();
      process.exit(code);
    },
    (e: unknown) => die(1, `failed: ${opts.explain?.(e) ?? (e instanceof Error ? (e.stack ?? e.message) : String(e))}`),
  );
}
