/**
 * The agent as a process: `sh -c <command>` in the worktree, in its own
 * process group so a stop reaches everything it started (SIGTERM to the
 * group, then SIGKILL after the grace period). Its output goes to the run's
 * log file; the time of its last output feeds the progress watchdog.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { constants } from "node:os";
import { exitCodeOf } from "./facts.js";

export interface AgentProcess {
  pid: number;
  /** When the agent last wrote anything (ms since the epoch). */
  lastOutputAt(): number;
  /** Resolves with the shell's exit code (128 + signal when a signal ended it). */
  exited: Promise<number>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves when the agent has exited. */
  stop(graceMs: number): Promise<number>;
}

const signals = constants.signals as unknown as Record<string, number>;

/** Signals the process group; false when it is gone already. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export function startAgent(opts: {
  command: string;
  cwd: string;
  env: Record<string, string>;
  logFile: string;
  now?: () => number;
}): AgentProcess {
  const now = opts.now ?? Date.now;
  const log = createWriteStream(opts.logFile, { flags: "a" });
  const child = spawn("sh", ["-c", opts.command], {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let last = now();
  const seen = (b: Buffer) => {
    last = now();
    log.write(b);
  };
  child.stdout.on("data", seen);
  child.stderr.on("data", seen);
  const exited = new Promise<number>((resolve) => {
    child.on("error", (err) => {
      log.write(`\n[worker] cannot start the agent: ${err.message}\n`);
      resolve(127);
    });
    child.on("exit", (code, signal) => {
      // Whatever the group still holds open is not the agent's answer: stop reading it.
      child.stdout.destroy();
      child.stderr.destroy();
      log.end();
      resolve(exitCodeOf(code, signal, signals));
    });
  });
  const pid = child.pid ?? -1;
  return {
    pid,
    lastOutputAt: () => last,
    exited,
    async stop(graceMs) {
      signalGroup(pid, "SIGTERM");
      const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      // The shell is gone; anything of its group still alive goes too.
      signalGroup(pid, "SIGKILL");
      return code;
    },
  };
}
