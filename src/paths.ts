import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package root, found by walking up from this file: the same code runs from
 * `src/` under the test runner and from `dist/src/` in production.
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "orchestra")
      return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the orchestra package root");
    dir = up;
  }
}
