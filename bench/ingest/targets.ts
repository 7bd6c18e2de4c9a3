// Starting, watching and stopping the two servers under test. Every child and
// every temporary directory is registered here, so a single cleanup pass can
// run from any exit path: normal end, thrown error, deadline or signal.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/**
 * Synchronous on purpose: it also runs from process.on("exit"), where nothing
 * asynchronous gets to finish.
 */
export function cleanupAllSync(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  children.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Last lines of a child's output, to explain a failed start, and a line count:
 * with LOG_LEVEL=warn a target that still logs per delivery pays for it, and
 * the report should show that rather than hide it.
 */
class Tail {
  private text = "";
  lines = 0;
  constructor(private readonly max = 16_000) {}
  push(chunk: Buffer): void {
    for (const byte of chunk) if (byte === 10) this.lines++;
    this.text = (this.text + chunk.toString("utf8")).slice(-this.max);
  }
  toString(): string {
    return this.text;
  }
}

export interface RunningTarget {
  name: string;
  port: number;
  child: ChildProcess;
  output: Tail;
  /** Resolves when the child has exited, for whatever reason. */
  exited: Promise<void>;
}

export interface StartOptions {
  name: string;
  script: string;
  cwd: string;
  env: Record<string, string>;
  port: number;
  readyPath: string;
  startTimeoutMs: number;
  /** Node options before the script (e.g. --cpu-prof, which NODE_OPTIONS does not take). */
  execArgv?: string[];
}

/** A target that would not start; its message already says why. */
export class StartError extends Error {}

export async function startTarget(o: StartOptions): Promise<RunningTarget> {
  const child = spawn(process.execPath, [...(o.execArgv ?? []), o.script], {
    cwd: o.cwd,
    env: o.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const output = new Tail();
  child.stdout?.on("data", (c: Buffer) => output.push(c));
  child.stderr?.on("data", (c: Buffer) => output.push(c));
  const exited = new Promise<void>((resolve) => {
    child.on("exit", () => resolve());
    child.on("error", (e) => {
      output.push(Buffer.from(`spawn error: ${e.message}\n`));
      resolve();
    });
  });
  void exited.then(() => children.delete(child));
  const target: RunningTarget = { name: o.name, port: o.port, child, output, exited };

  const deadline = Date.now() + o.startTimeoutMs;
  let dead = false;
  void exited.then(() => (dead = true));
  while (Date.now() < deadline) {
    if (dead) {
      throw new StartError(
        `${o.name} exited during start-up (code ${String(child.exitCode)}, signal ${String(child.signalCode)}). Output:\n${output}`,
      );
    }
    if ((await probe(o.port, o.readyPath)) === 200) return target;
    await sleep(100);
  }
  await stopTarget(target);
  throw new StartError(`${o.name} not ready on ${o.readyPath} within ${o.startTimeoutMs} ms. Output:\n${output}`);
}

/**
 * SIGKILL, not SIGTERM: a 2xx promises the delivery is stored, so the store
 * must hold every acknowledged delivery even when the process dies without a
 * chance to flush anything. Counting after a kill checks exactly that.
 */
export async function stopTarget(
  t: RunningTarget,
  timeoutMs = 5000,
  signal: NodeJS.Signals = "SIGKILL",
): Promise<void> {
  if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill(signal);
  await Promise.race([t.exited, sleep(timeoutMs)]);
  if (signal !== "SIGKILL" && t.child.exitCode === null && t.child.signalCode === null) {
    t.child.kill("SIGKILL");
    await Promise.race([t.exited, sleep(timeoutMs)]);
  }
  children.delete(t.child);
}

function probe(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path, agent: false, timeout: 1000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(0));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

let clockTicks: number | undefined;

/**
 * CPU time the server process has used so far, from /proc (Linux). Lets the
 * report put work per delivery next to latency: on two cores the server, its
 * background work and this load generator all compete for the same CPUs.
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    if (clockTicks === undefined) {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    }
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces; fields are counted after its ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / clockTicks;
  } catch {
    return null;
  }
}

function statusMb(pid: number | undefined, field: "VmHWM" | "VmRSS"): number | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(status);
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Peak resident memory of the server process in MB, from /proc (Linux). */
export function processPeakRssMb(pid: number | undefined): number | null {
  return statusMb(pid, "VmHWM");
}

/** Current resident memory of the server process in MB, from /proc (Linux). */
export function processRssMb(pid: number | undefined): number | null {
  return statusMb(pid, "VmRSS");
}

export interface Settle {
  seconds: number;
  quiet: boolean;
  /** Share of one CPU the server used in the last window. */
  lastCpuShare: number | null;
}

/**
 * Waits at least `minS`, then until the server has been nearly idle for half
 * a second (or `maxS` passed). A server that processes deliveries in the
 * background is still working off the previous phase's backlog after the last
 * ack; measuring the next phase on top of that would charge it for work the
 * phase did not cause. How long it took to go quiet is itself reported.
 */
export async function settle(pid: number | undefined, minS: number, maxS: number): Promise<Settle> {
  const start = Date.now();
  await sleep(minS * 1000);
  let share: number | null = null;
  while (Date.now() - start < maxS * 1000) {
    const c0 = processCpuMs(pid);
    const t0 = Date.now();
    await sleep(500);
    const c1 = processCpuMs(pid);
    if (c0 === null || c1 === null) return { seconds: (Date.now() - start) / 1000, quiet: false, lastCpuShare: null };
    share = (c1 - c0) / (Date.now() - t0);
    if (share < 0.05) return { seconds: (Date.now() - start) / 1000, quiet: true, lastCpuShare: share };
  }
  return { seconds: (Date.now() - start) / 1000, quiet: false, lastCpuShare: share };
}

/**
 * The environment the service is started with in a benchmark: production
 * settings and nothing inherited from this shell (a stray DATABASE_URL,
 * WEBHOOK_PROXY_URL or NODE_OPTIONS would make targets differ or send
 * traffic off this machine). `dir` is the empty working directory (Probot
 * loads ./.env over the environment). GitHub is a port on 127.0.0.1 where
 * nothing listens, so any call the service makes fails at once there.
 */
export async function serviceEnv(o: {
  dir: string;
  port: number;
  databaseUrl: string;
  secrets: { privateKey: string; webhookSecret: string; adminToken: string };
}): Promise<Record<string, string>> {
  let ghePort = await freePort();
  while (ghePort === o.port) ghePort = await freePort();
  return {
    PATH: process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: o.dir,
    TMPDIR: o.dir,
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    LOG_FORMAT: "json",
    HOST: "127.0.0.1",
    PORT: String(o.port),
    APP_ID: "123456",
    PRIVATE_KEY: o.secrets.privateKey,
    WEBHOOK_SECRET: o.secrets.webhookSecret,
    ORCHESTRA_ADMIN_TOKEN: o.secrets.adminToken,
    ORCHESTRA_METRICS_TOKEN: `${o.secrets.adminToken}-metrics`,
    DATABASE_URL: o.databaseUrl,
    GHE_HOST: `127.0.0.1:${ghePort}`,
    GHE_PROTOCOL: "http",
  };
}
