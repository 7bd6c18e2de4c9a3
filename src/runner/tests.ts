/** The test command, run by the worker in the worktree: its exit code, not the agent's word, sets testsPassed. */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { signalGroup } from "./agent.js";

export function runTests(
  command: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
  logFile: string,
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const log = openSync(logFile, "a");
    const child = spawn("sh", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", log, log] });
    closeSync(log);
    const timer = setTimeout(() => signalGroup(child.pid ?? -1, "SIGKILL"), timeoutMs);
    child.on("error", () => resolve(false));
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}
