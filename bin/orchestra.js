#!/usr/bin/env node
// The `orchestra` command. The code lives in the build (npm ci builds it).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const entry = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "src", "cli", "main.js");
if (!existsSync(entry)) {
  process.stderr.write("orchestra: the build is missing (dist/); run `npm run build` in the package first\n");
  process.exit(1);
}
await import(entry);
