#!/usr/bin/env node
// Writes prisma/postgresql/schema.prisma from prisma/sqlite/schema.prisma.
// The two providers must carry the same models; generating one from the other
// keeps them identical by construction (test/store/schemas.test.ts checks it).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export function postgresSchemaFrom(sqlite) {
  const out = sqlite
    .replace(
      'output              = "../../src/store/generated/sqlite"',
      'output              = "../../src/store/generated/postgresql"',
    )
    .replace('provider = "sqlite"', 'provider = "postgresql"')
    .replace(
      'url      = "file:../../data/orchestra.db"',
      'url      = "postgresql://placeholder@localhost:5432/orchestra"',
    )
    .replace(
      /^\/\/ Orchestra's storage\.[\s\S]*?apart\.\n/m,
      "// Generated from ../sqlite/schema.prisma by scripts/sync-schemas.mjs. Do not edit.\n",
    );
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sqlite = readFileSync(join(root, "prisma/sqlite/schema.prisma"), "utf8");
  writeFileSync(join(root, "prisma/postgresql/schema.prisma"), postgresSchemaFrom(sqlite));
  console.log("wrote prisma/postgresql/schema.prisma");
}
