#!/usr/bin/env node
// Compiles the TypeScript sources into dist/ with tsc.
//
//   node scripts/build.mjs             always compile (npm run build, prepare)
//   node scripts/build.mjs --if-stale  compile only when a source is newer than
//                                      the last successful build (npm start)
//
// A successful compile leaves dist/.build-stamp, dated when that compile
// started, so a file saved while tsc was running still counts as changed. A
// failed compile removes the stamp: tsc emits JavaScript even when the types do
// not check, and that output must not pass for a good build at the next start.
// The sources are what tsconfig.json includes, plus tsconfig.json itself.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsconfigPath = join(root, "tsconfig.json");
const tsconfig = JSON.parse(readFileSync(tsconfigPath, "utf8"));
const outDir = join(root, tsconfig.compilerOptions?.outDir ?? "dist");
const stamp = join(outDir, ".build-stamp");

/** The newest source file newer than `since` (ms), or null. */
function newerSource(since) {
  const skip = new Set((tsconfig.exclude ?? []).map((e) => join(root, e)));
  const isSource = (name) => /\.(c|m)?ts$/.test(name) && !/\.d\.(c|m)?ts$/.test(name);
  const walk = (dir, match) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return null;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (skip.has(path)) continue;
      if (e.isDirectory()) {
        if (match === "deep") {
          const found = walk(path, match);
          if (found) return found;
        }
      } else if (isSource(e.name) && statSync(path).mtimeMs > since) return path;
    }
    return null;
  };
  if (statSync(tsconfigPath).mtimeMs > since) return tsconfigPath;
  for (const pattern of tsconfig.include ?? ["."]) {
    // tsconfig's include here is directories ("src") and one level of "dir/*.ts".
    const flat = pattern.endsWith("/*.ts");
    const found = walk(join(root, flat ? pattern.slice(0, -"/*.ts".length) : pattern), flat ? "flat" : "deep");
    if (found) return found;
  }
  return null;
}

function compile() {
  const require = createRequire(import.meta.url);
  let tsc;
  try {
    tsc = require.resolve("typescript/bin/tsc");
  } catch {
    process.stderr.write(
      "orchestra: cannot compile: TypeScript is not installed (a production-only install?); run `npm ci` with dev dependencies, or start the compiled service with `node dist/src/main.js`\n",
    );
    return 1;
  }
  const started = new Date();
  rmSync(stamp, { force: true });
  const result = spawnSync(process.execPath, [tsc, "-p", tsconfigPath], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write(
      `orchestra: tsc failed (exit ${result.status ?? result.signal}); fix the errors above and start again\n`,
    );
    return result.status || 1;
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(stamp, `compiled from the sources as of ${started.toISOString()}\n`);
  utimesSync(stamp, started, started);
  return 0;
}

const ifStale = process.argv.includes("--if-stale");
if (ifStale) {
  const since = existsSync(stamp) ? statSync(stamp).mtimeMs : -1;
  const changed = since < 0 ? "no successful build yet" : newerSource(since);
  if (!changed) process.exit(0);
  process.stderr.write(
    `orchestra: compiling first (${since < 0 ? changed : `${relative(root, changed)} changed since the last build`})\n`,
  );
}
process.exit(compile());
