// Prisma CLI configuration for the PostgreSQL schema. Only the CLI reads this
// file (generate, migrate diff); the service opens its own connections and
// applies migrations itself (src/store/migrate.ts).
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

export default defineConfig({
  schema: "schema.prisma",
  migrations: { path: "migrations" },
  engine: "js",
  experimental: { adapter: true },
  adapter: () =>
    Promise.resolve(
      new PrismaPg({
        connectionString: process.env.DATABASE_URL ?? "postgresql://placeholder@localhost:5432/orchestra",
        allowExitOnIdle: true,
      }),
    ),
});
