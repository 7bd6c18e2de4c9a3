/** The App as a child process (dist/test/support/child.js), for kill and multi-replica tests. */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export const childJs = join(import.meta.dirname, "..", "..", "dist/test/support/child.js");

export function startChild(env: Record<string, string>): Promise<{ proc: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [childJs], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    proc.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve({ proc, port: Number(m[1]) });
    });
    proc.stderr.on("data", (b: Buffer) => (err += b.toString()));
    proc.on("exit", (code) => reject(new Error(`child exited ${code} before listening: ${err}`)));
  });
}
