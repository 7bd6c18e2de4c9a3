import { readFileSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error -- plain ESM script without type declarations
import { postgresSchemaFrom } from "../../scripts/sync-schemas.mjs";
import { listMigrations } from "../../src/store/migrate.js";

const root = join(import.meta.dirname, "..", "..");

test("the PostgreSQL schema is generated from the SQLite one (run npm run schema:sync)", () => {
  const sqlite = readFileSync(join(root, "prisma/sqlite/schema.prisma"), "utf8");
  const pg = readFileSync(join(root, "prisma/postgresql/schema.prisma"), "utf8");
  expect(pg).toBe((postgresSchemaFrom as (s: string) => string)(sqlite));
});

test("both providers have the same migrations, in the same order", () => {
  expect(listMigrations("postgresql").map((m) => m.name)).toEqual(listMigrations("sqlite").map((m) => m.name));
});
