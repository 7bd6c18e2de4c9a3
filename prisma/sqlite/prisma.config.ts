// Prisma CLI configuration for the embedded SQLite schema. Only the CLI reads
// this file (generate, migrate diff); the service opens its own connections
// and applies migrations itself (src/store/migrate.ts).
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

export default defineConfig({
  schema: "schema.prisma",
  migrations: { path: "migrations" },
  engine: "js",
  experimental: { adapter: true },
  adapter: () => Promise.resolve(new PrismaBetterSQLite3({ url: process.env.SQLITE_CLI_URL ?? "file:./cli.db" })),
});
