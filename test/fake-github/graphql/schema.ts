/**
 * GitHub's published GraphQL schema (from @octokit/graphql-schema), built
 * once per module registry and only when a test first sends GraphQL.
 *
 * Jest gives every test file a fresh module registry, so each file that talks
 * GraphQL builds the schema once (~150–250 ms here: parse + build of the
 * 1.2 MB SDL); files that never send GraphQL pay nothing, since graphql-js
 * itself is imported lazily too.
 *
 * The SDL is built with `assumeValidSDL`: GitHub's published SDL defines a
 * couple of fields twice (EnterpriseOwnerInfo.repositoryDeployKeySetting…),
 * which graphql-js would otherwise refuse. Queries are still validated in full.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { GraphQLSchema } from "graphql";

export type GraphQLModule = typeof import("graphql");

export interface LoadedSchema {
  graphql: GraphQLModule;
  schema: GraphQLSchema;
  /** milliseconds spent reading, parsing and building the SDL */
  buildMs: number;
}

let loading: Promise<LoadedSchema> | null = null;

/** The schema, built on first use and then shared by every fake in this module registry. */
export function githubSchema(): Promise<LoadedSchema> {
  loading ??= build();
  return loading;
}

async function build(): Promise<LoadedSchema> {
  const graphql = await import("graphql");
  const started = performance.now();
  const sdl = fs.readFileSync(schemaPath(), "utf8");
  const schema = graphql.buildASTSchema(graphql.parse(sdl, { noLocation: true }), { assumeValidSDL: true });
  return { graphql, schema, buildMs: performance.now() - started };
}

/**
 * The package exports only its ESM entry (which would also parse its 5 MB
 * JSON copy of the schema), so the SDL file is found beside it on the
 * module search path instead.
 */
function schemaPath(): string {
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths("@octokit/graphql-schema") ?? []) {
    const file = path.join(dir, "@octokit", "graphql-schema", "schema.graphql");
    if (fs.existsSync(file)) return file;
  }
  throw new Error("fake GitHub: @octokit/graphql-schema is not installed (npm install)");
}
