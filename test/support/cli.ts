/** Runs the built `orchestra` bin as a child process, as an operator would. */
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const bin = join(import.meta.dirname, "..", "..", "bin", "orchestra.js");

/** What a child takes from the test's own environment: the commands, and the clock and time zone it runs on. */
const INHERITED = ["PATH", "TZ", "LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_FAKE_MONOTONIC"];

/**
 * The environment of a child the test starts: exactly `env`, plus PATH and
 * the clock. The clock matters when the suite runs at another hour under a
 * preloaded clock (libfaketime's LD_PRELOAD and FAKETIME): a child on the real
 * clock would sign tokens the fake GitHub calls stale and see yesterday's
 * deliveries as today's.
 */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const inherited = INHERITED.flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]] as const]));
  return { PATH: "", ...Object.fromEntries(inherited), ...env };
}

/** Runs `orchestra …` (from an empty directory: no .env is read); never rejects, answers the exit code. */
export function runCli(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: tmpdir(), env: childEnv(env), timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * `orchestra …` against a running App: `cli` answers whatever happened, `ok`
 * expects exit 0 with nothing on stderr and answers stdout. `app()` is read at
 * each call (tests start their App inside the test).
 */
export function cliAgainst(app: () => { url: string; adminToken: string }, extra: Record<string, string> = {}) {
  const cli = (...args: string[]) =>
    runCli({ ORCHESTRA_URL: app().url, ORCHESTRA_ADMIN_TOKEN: app().adminToken, ...extra }, args);
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
    return r.stdout;
  };
  return { cli, ok };
}
