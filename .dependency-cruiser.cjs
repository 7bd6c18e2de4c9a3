/**
 * The layering of src/, checked by `npm run lint` (docs/architecture.md draws it).
 *
 *   pure rooms      decisions and texts: no I/O, no database, no GitHub, no HTTP
 *   store, github   the two ports: the database and GitHub
 *   rooms           capabilities, each owning its queries
 *   HTTP layer      http/, api/, dashboard/, ingest/ and the route modules
 *   wiring          app.ts, main.ts, cli/
 */

/** Rooms whose modules decide or render and never touch the outside world. */
const PURE = [
  "^src/machine/",
  "^src/outcomes/((classify|facts|infra-patterns|repository-patterns)\\.ts$|infra-catalogue/)",
  "^src/texts/",
  "^src/retry/",
  "^src/redact/",
  "^src/refusal\\.ts$",
  "^src/config/(repo|defaults)\\.ts$",
  "^src/trust/trust\\.ts$",
  "^src/human/(parse|commands)\\.ts$",
  "^src/inbox/task-key\\.ts$",
  "^src/reconcile/deliveries-model\\.ts$",
];

/** The HTTP layer and the wiring above it: the only modules that may import http/ or api/. */
const HTTP_AND_ABOVE = [
  "^src/http/",
  "^src/api/",
  "^src/dashboard/",
  "^src/ingest/",
  "^src/health/routes\\.ts$",
  "^src/metrics/routes\\.ts$",
  "^src/app/",
  "^src/main\\.ts$",
  "^src/cli/",
];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Rooms import one way; a cycle means two rooms are one, or a type sits in the wrong one.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "pure-rooms-no-io",
      severity: "error",
      comment:
        "The machine, the classifier and the texts decide from what they are given: no database, GitHub, HTTP, " +
        "file system or network. They may import each other, zod and re2-wasm, and types only from elsewhere.",
      from: { path: PURE },
      to: {
        // re2-wasm: RE2 in WebAssembly, loaded once and synchronously at import (src/outcomes/repository-patterns.ts).
        pathNot: [...PURE, "^node_modules/zod/", "^node_modules/re2-wasm/"],
        dependencyTypesNot: ["type-only", "core"],
      },
    },
    {
      name: "pure-rooms-no-io-builtins",
      severity: "error",
      comment:
        "Pure rooms use no Node.js I/O modules. Allowed: crypto, for ids and digests; module, whose createRequire " +
        "loads a package's code when it is first needed rather than at start, as a static import would at start " +
        "(outcomes/repository-patterns.ts: RE2's WebAssembly only once a repository names a pattern).",
      from: { path: PURE },
      to: { dependencyTypes: ["core"], pathNot: "^(node:)?(crypto|module)$" },
    },
    {
      name: "ports-import-no-rooms",
      severity: "error",
      comment:
        "store/ and github/ are the two ports at the bottom: they import each other, the pure rooms and the " +
        "configuration, never a capability above them.",
      from: { path: ["^src/store/", "^src/github/", "^src/config/", "^src/log\\.ts$", "^src/paths\\.ts$"] },
      to: {
        path: "^src/",
        pathNot: [...PURE, "^src/store/", "^src/github/", "^src/config/", "^src/log\\.ts$", "^src/paths\\.ts$"],
      },
    },
    {
      name: "webhooks-only-from-the-wiring",
      severity: "error",
      comment: "One room receives webhooks and app.ts registers it; no capability reaches into it.",
      from: { path: "^src/", pathNot: ["^src/webhooks/", "^src/app/"] },
      to: { path: "^src/webhooks/" },
    },
    {
      name: "http-only-from-the-http-layer",
      severity: "error",
      comment: "Domain rooms return typed outcomes (src/refusal.ts); only the HTTP layer speaks HTTP.",
      // The worker is held by its own rules below (it may read the API's types).
      from: { path: "^src/", pathNot: [...HTTP_AND_ABOVE, "^src/runner/"] },
      to: { path: ["^src/http/", "^src/api/", "^src/dashboard/", "^src/ingest/"] },
    },
    {
      name: "api-only-from-the-wiring",
      severity: "error",
      comment: "The API's routes are registered by app.ts; the CLI and the worker may read their types.",
      from: { path: "^src/", pathNot: ["^src/api/", "^src/app/", "^src/cli/", "^src/runner/"] },
      to: { path: "^src/api/" },
    },
    {
      name: "cli-reads-api-types-only",
      severity: "error",
      comment: "The CLI talks to the service over HTTP: it shares the API's types and constants, never its code paths.",
      from: { path: "^src/cli/" },
      to: { path: "^src/api/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "runner-reads-api-types-and-pure-rooms-only",
      severity: "error",
      comment:
        "The worker (runner/) is a client of the service: it talks to the worker API over HTTP and runs git and " +
        "the agent. It shares the API's types and the pure rooms' decisions, never the service's code paths.",
      from: { path: "^src/runner/" },
      to: { path: "^src/", pathNot: ["^src/runner/", "^src/api/", ...PURE] },
    },
    {
      name: "runner-reads-api-types-only",
      severity: "error",
      comment: "From the API, the worker takes types only (its request schemas), never its routes.",
      from: { path: "^src/runner/" },
      to: { path: "^src/api/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "runner-only-from-the-cli",
      severity: "error",
      comment: "The worker is a verb of the CLI; nothing in the service imports it.",
      from: { path: "^src/", pathNot: ["^src/runner/", "^src/cli/"] },
      to: { path: "^src/runner/" },
    },
    {
      name: "generated-client-only-in-store",
      severity: "error",
      comment:
        "Prisma's generated client is imported by store/ alone (it opens the database and exports the row " +
        "types); every other room reaches the database through store/ and its own queries module.",
      from: { path: "^src/", pathNot: "^src/store/" },
      to: { path: "^src/store/generated/" },
    },
    {
      name: "drivers-only-in-store",
      severity: "error",
      comment: "The database drivers and Prisma's runtime are store/'s business.",
      from: { path: "^src/", pathNot: "^src/store/" },
      to: { path: "^node_modules/(@prisma|prisma|pg|better-sqlite3)/" },
    },
    {
      name: "octokit-only-in-github",
      severity: "error",
      comment: "GitHub is reached through one port (github/port.ts); Octokit stays behind it.",
      from: { path: "^src/", pathNot: ["^src/github/", "^src/app/", "^src/main\\.ts$", "^src/cli/doctor/"] },
      to: { path: "^node_modules/(@octokit|octokit)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "entry-only-wires",
      severity: "error",
      comment: "Nothing imports the entry points.",
      from: {},
      to: { path: ["^src/main\\.ts$", "^src/cli/main\\.ts$"] },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "no-test-code-in-src",
      severity: "error",
      from: { path: "^(src|bench|scripts)/" },
      to: { path: "^test/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^src/store/generated/", "^dist/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
