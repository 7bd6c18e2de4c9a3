// Writes the generated transition table into docs/design.md (npm run docs:machine).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withTransitionTable } from "../src/machine/doc.js";
import { packageRoot } from "../src/paths.js";

const page = join(packageRoot(), "docs", "design.md");
writeFileSync(page, withTransitionTable(readFileSync(page, "utf8")));
process.stdout.write("wrote the transition table in docs/design.md\n");
