/**
 * Closing the embedded database must settle even when nothing else keeps the
 * process alive: the setup page is started right after a close, and a close
 * that never settled let the process exit silently instead.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dbJs = pathToFileURL(join(import.meta.dirname, "..", "..", "dist/src/store/db.js")).href;

test("openDatabase then close settles in a process with nothing else to do", () => {
  const dir = mkdtempSync(join(tmpdir(), "orchestra-close-"));
  try {
    const script = `const { openDatabase } = await import(${JSON.stringify(dbJs)});
      for (let i = 0; i < 3; i++) { const d = await openDatabase("file:${join(dir, "o.db")}"); await d.close(); }
      console.log("closed");`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000 });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("closed");
    expect(r.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
