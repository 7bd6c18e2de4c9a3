#!/usr/bin/env node
// docs/architecture.md: the rooms of src/, the one-way arrows between them, and
// the path of one webhook and one worker call. The rooms and arrows are read
// from the import graph (dependency-cruiser, with the project's rules), so the
// page cannot drift from the code:
//
//   node scripts/architecture.mjs          write docs/architecture.md
//   node scripts/architecture.mjs --check  fail when the page differs from what the code says (npm run lint)
//
// Every room must be described below, and every module the two paths name
// must exist; either mistake fails both modes.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const page = join(root, "docs/architecture.md");

/** Layers, bottom first: a room may import rooms of its own layer or below (the dependency rules enforce it). */
const LAYERS = [
  ["pure", "Decisions and texts: no I/O, no database, no GitHub, no HTTP."],
  ["ports", "The two ports to the outside world, and the configuration they read."],
  ["rooms", "Capabilities, each owning its rows and queries; effects on GitHub go through the outbox."],
  ["http", "The HTTP layer: routes, the webhook ingest, the dashboard."],
  ["worker", "The reference worker: a client of the worker API that runs git and the agent (API types only)."],
  ["wiring", "Entries that only wire rooms together."],
];

const ROOMS = {
  machine: ["pure", "the task state machine: events, states, effects, one exhaustive table"],
  outcomes: ["pure", "the classifier (facts to one failure class and recovery) and gathering its facts"],
  texts: ["pure", "what Orchestra writes on GitHub: comments, the check run, GitHub's size limits"],
  retry: ["pure", "when a failed delivery or effect is tried again, and when it is given up"],
  redact: ["pure", "what may be shown of a setting or URL"],
  "refusal.ts": ["pure", "the typed refusal domain rooms throw; the HTTP layer maps it to a status"],
  store: ["ports", "the database: opening it (SQLite or PostgreSQL), migrations, the fenced SQL"],
  github: ["ports", "the one port to GitHub (port.ts) and its Octokit adapter"],
  config: ["ports", "service settings (env) and each repository's .github/orchestra.yml"],
  "log.ts": ["ports", "the service logger"],
  "paths.ts": ["ports", "where the package's files are"],
  apply: ["rooms", "the fenced apply: the only writer of task and run rows"],
  inbox: ["rooms", "stored webhook deliveries, claimed per task key and processed"],
  events: ["rooms", "routes a stored delivery to the one handler of its event"],
  webhooks: ["rooms", "the one room that receives webhooks: thin handlers raising machine events"],
  effects: ["rooms", "the outbox and its executor: every write to GitHub, paced per installation"],
  claims: ["rooms", "which queued task a worker may claim, leases and heartbeats"],
  exits: ["rooms", "a worker's exit verified on GitHub and settled into one class"],
  dispatch: ["rooms", "dispatch mode: runs on GitHub Actions instead of a worker"],
  gates: ["rooms", "what holds a queue: pauses, the breaker, concurrency limits"],
  blockers: ["rooms", "issue dependencies: blocked tasks wait"],
  checks: ["rooms", "check failures, base moves and rewritten branches under a task's PR"],
  human: ["rooms", "trusted human input: commands, conditions, questions, the audit, operator actions"],
  trust: ["rooms", "who is trusted: collaborator permissions from GitHub"],
  reconcile: ["rooms", "missed deliveries, drift repair, failure streaks, stale branches"],
  retention: ["rooms", "old rows deleted on a schedule"],
  sweeps: ["rooms", "the sweep: lease expiry, settling runs, dispatching"],
  replicas: ["rooms", "each replica's beat; what a replica that stopped beating held is released to the others"],
  workers: ["rooms", "worker identities, their tokens, and pausing workers that keep releasing runs"],
  credentials: ["rooms", "GitHub tokens brokered to runs: minted, renewed, sealed at rest, revoked with the lease"],
  fleet: ["rooms", "the fleet issue of a repository"],
  views: ["rooms", "read models for the dashboard and the API"],
  metrics: ["rooms", "Prometheus metrics, GitHub call tallies, staleness"],
  cost: ["rooms", "GitHub calls spent per task"],
  ignored: ["rooms", "counts of input deliberately ignored"],
  health: ["http", "readiness and the health routes"],
  http: ["http", "the router, bodies and answers"],
  ingest: ["http", "reading, verifying and storing a webhook delivery"],
  api: ["http", "the operator and worker API under /api/v1"],
  dashboard: ["http", "the operator dashboard"],
  runner: ["worker", "`orchestra worker`: claims, mirrors and worktrees, the agent under its clocks, facts, push, PR"],
  app: [
    "wiring",
    "builds every room (rooms.ts) on the Probot server (github.ts) and registers routes and webhooks (routes.ts); " +
      "setup mode's server (setup.ts)",
  ],
  "main.ts": [
    "wiring",
    "the service entry: settings, database, Probot server; a start-up failure is one line and its exit code",
  ],
  cli: ["wiring", "the `orchestra` command line"],
};

/** Hand-written paths: every `src/...` module they name is checked to exist. */
const PATHS = `## The path of one webhook

1. GitHub posts \`issues.labeled\` to \`/api/github/webhooks\`: \`src/ingest/webhook.ts\` reads the body within its limits
   (\`src/ingest/body.ts\`), verifies the signature and stores the delivery once in the inbox
   (\`src/inbox/store.ts\`) under its task key (\`src/inbox/task-key.ts\`), then answers 202.
2. The processor (\`src/inbox/processor.ts\`) claims the head delivery of a key and hands it to the event router
   (\`src/events/router.ts\`), which calls the one handler registered for the event (\`src/webhooks/register.ts\`).
3. The handler (\`src/webhooks/issues.ts\`) gathers the facts it needs and raises one machine event through
   \`src/apply/tasks.ts\`.
4. The machine (\`src/machine/table.ts\`) decides; the fenced apply (\`src/apply/apply.ts\`) writes the task row, the run
   row and the effects in one transaction.
5. The executor (\`src/effects/executor.ts\`) performs each effect (\`src/effects/perform.ts\`) through the GitHub port
   (\`src/github/port.ts\`), paced per installation (\`src/effects/installations.ts\`).

## The path of one worker call

1. A worker posts \`/api/v1/claims\` with its token: \`src/api/workers.ts\` authenticates it (\`src/workers/tokens.ts\`)
   and validates the body against \`src/api/worker-schemas.ts\`.
2. \`src/claims/claims.ts\` finds the best claimable task (\`src/claims/candidates.ts\`, gates from \`src/gates/\`) and
   raises the claim event; the machine grants a fenced lease and the apply writes it.
3. Later calls (heartbeat, decisions) go through \`src/claims/leases.ts\`; the exit through \`src/exits/exit.ts\`, which
   verifies the claim on GitHub and settles the run into one class (\`src/outcomes/classify.ts\`).
4. A refusal (a lost lease, a stale epoch) is a \`Refusal\` (\`src/refusal.ts\`); \`src/http/router.ts\` answers it with its
   status, and \`src/api/idempotency.ts\` stores the answer under the call's Idempotency-Key.
`;

function roomOf(source) {
  const m = /^src\/([^/]+)(\/.*)?$/.exec(source);
  if (!m) return null;
  return m[1];
}

function graph() {
  const bin = join(root, "node_modules/.bin/depcruise");
  const out = execFileSync(bin, ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const { modules } = JSON.parse(out);
  const arrows = new Map();
  for (const m of modules) {
    const from = roomOf(m.source);
    if (!from) continue;
    if (!arrows.has(from)) arrows.set(from, new Set());
    for (const d of m.dependencies) {
      const to = roomOf(d.resolved);
      if (to && to !== from) arrows.get(from).add(to);
    }
  }
  return arrows;
}

function render(arrows) {
  const problems = [];
  for (const room of arrows.keys())
    if (!ROOMS[room]) problems.push(`room ${room} is not described in ${fileURLToPath(import.meta.url)}`);
  for (const room of Object.keys(ROOMS))
    if (!arrows.has(room)) problems.push(`room ${room} is described but not in src/`);
  for (const [, path] of PATHS.matchAll(/`(src\/[^`]+)`/g))
    if (!existsSync(join(root, path))) problems.push(`the paths name ${path}, which does not exist`);
  if (problems.length) {
    for (const p of problems) console.error(`architecture: ${p}`);
    process.exit(1);
  }
  const lines = [
    "# Architecture",
    "",
    "<!-- Generated by `node scripts/architecture.mjs` from the import graph; `npm run lint` fails when it differs. -->",
    "",
    "Orchestra is a set of rooms, one folder of `src/` each. Imports run one way, from the wiring down to the pure",
    "rooms; `.dependency-cruiser.cjs` holds the rules (no cycles, pure rooms import no I/O, only the HTTP layer",
    "imports `http/` and `api/`, only `store/` imports Prisma's generated client, one room receives webhooks) and",
    "ESLint holds two more: only `apply/` writes task and run rows, and each room reaches the database through its",
    "own `queries.ts` (the interface of what it reads and writes), never the whole Prisma client.",
    "",
  ];
  for (const [layer, what] of LAYERS) {
    lines.push(
      `## ${layer[0].toUpperCase()}${layer.slice(1)}`,
      "",
      what,
      "",
      "| Room | What it holds | Imports |",
      "| --- | --- | --- |",
    );
    const rooms = Object.entries(ROOMS).filter(([, [l]]) => l === layer);
    for (const [room, [, what]] of rooms) {
      const to = [...(arrows.get(room) ?? [])].sort();
      lines.push(`| \`${room}\` | ${what} | ${to.length ? to.map((t) => `\`${t}\``).join(", ") : "—"} |`);
    }
    lines.push("");
  }
  return lines.join("\n") + "\n" + PATHS;
}

const text = render(graph());
if (process.argv.includes("--check")) {
  const now = existsSync(page) ? readFileSync(page, "utf8") : "";
  if (now !== text) {
    console.error("architecture: docs/architecture.md differs from the import graph; run `npm run docs:architecture`");
    process.exit(1);
  }
  console.log("architecture: docs/architecture.md matches the import graph");
} else {
  writeFileSync(page, text);
  console.log(`architecture: wrote ${page}`);
}
