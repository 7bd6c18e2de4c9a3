/**
 * The `orchestra` command with secrets in its settings: whatever it fails on,
 * what it prints shows URLs with their passwords masked and no token.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv } from "../support/cli.js";

const PASSWORD = "hunter2-Sup3r-secret";

describe("the orchestra command with secrets in its settings", () => {
  const bin = join(import.meta.dirname, "..", "..", "bin/orchestra.js");
  const run = (args: string[], env: Record<string, string>) => {
    const cwd = mkdtempSync(join(tmpdir(), "orchestra-cli-"));
    try {
      const child = spawnSync(process.execPath, [bin, ...args], {
        cwd,
        env: childEnv(env),
        encoding: "utf8",
        timeout: 30_000,
      });
      return { ...child, output: child.stdout + child.stderr };
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };

  test.each([
    [
      "migrate, malformed URL",
      ["migrate"],
      { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:5432` },
      2,
      `(got "postgresql://orchestra:***@127.0.0.1:5432")`,
    ],
    [
      "migrate, no server",
      ["migrate"],
      { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:1/orchestra` },
      1,
      "on postgresql://orchestra:***@127.0.0.1:1/orchestra (Can't reach database server at 127.0.0.1:1)",
    ],
    [
      "prune, no server",
      ["prune"],
      { DATABASE_URL: `postgresql://orchestra:${PASSWORD}@127.0.0.1:1/orchestra` },
      1,
      "database unreachable at postgresql://orchestra:***@127.0.0.1:1/orchestra",
    ],
    [
      "an API command, service URL with credentials",
      ["deliveries"],
      { ORCHESTRA_URL: `http://ops:${PASSWORD}@127.0.0.1:9`, ORCHESTRA_ADMIN_TOKEN: "t".repeat(40) },
      1,
      "cannot reach the service at http://ops:***@127.0.0.1:9",
    ],
  ])("%s: the password is masked", (_name, args, env, code, says) => {
    const child = run(args, env);
    expect(child.status).toBe(code);
    expect(child.stderr).toContain(says);
    expect(child.output).not.toContain("hunter2");
    expect(child.output).not.toContain("t".repeat(40));
  });
});
