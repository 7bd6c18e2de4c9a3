/**
 * GitHub's REST description (from @octokit/openapi) reduced to what request
 * validation needs: path templates, parameters and JSON request-body schemas.
 * api.github.com's by default; the other hosts' (GitHub Enterprise Cloud, each
 * GitHub Enterprise Server release) on request.
 *
 * The full description is 13 MB. Parsing it costs ~150 ms and converting its
 * schemas more, and every Jest test file gets a fresh module registry, so an
 * in-memory memo alone would pay that once per test file. The reduced index
 * is therefore also written to `node_modules/.cache/` (keyed by the source
 * file's size and mtime) and later processes read that small file instead.
 *
 * The parts: openapi/types.ts (the index's shapes), openapi/lookup.ts
 * (OpenApiIndex: operations by id, route or raw path, and body validators)
 * over openapi/trie.ts (path templates as a trie), openapi/ajv.ts (Ajv set up
 * for the description, its errors as text), openapi/load.ts (the memo and the
 * on-disk cache), openapi/build.ts (reducing a full description) and
 * openapi/schema.ts (OpenAPI schemas converted for ajv).
 */
export { createAjv, formatAjvErrors } from "./openapi/ajv.js";
export { loadOpenApi, shippedGhesReleases, type Description } from "./openapi/load.js";
export { OpenApiIndex } from "./openapi/lookup.js";
export { convertSchema } from "./openapi/schema.js";
export type { JsonSchema, OperationMatch, OperationSpec, ParamSpec } from "./openapi/types.js";
