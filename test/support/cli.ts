/** Runs the built `orchestra` bin as a child process, as an operator would. */
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");

/** Runs `orchestra …` (from an empty directory: no .env is read); never rejects, answers the exit code. */
export function runCli(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: tmpdir(), env: { PATH: process.env["PATH"] ?? "", ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
