// The backlog benchmark's worlds: queued tasks seeded straight into a fresh
// database (the baseline's short queue, a repository at its limit holding the
// oldest 10,000 tasks, 10,000 tasks over 100 repositories and 5
// installations), the Claims service wired the way src/app.ts wires it,
// putting a claimed task back so every claim sees the same world, and the
// plans of the claim's queries, taken from the SQL the service itself builds.
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { pino } from "pino";
import type { SqlDriverAdapter, SqlQuery } from "@prisma/driver-adapter-utils";
import { Tasks } from "../../src/apply/tasks.js";
import { candidates, installationsInTurn, liveByInstallation } from "../../src/claims/candidates.js";
import { Claims } from "../../src/claims/claims.js";
import { Decisions } from "../../src/claims/decisions.js";
import { claimQueries as claimRows } from "../../src/claims/queries.js";
import { parseRepoConfig, type ConfigResult } from "../../src/config/repo.js";
import { gateColumns } from "../../src/gates/repos.js";
import { openDatabase, redact, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { atomically } from "../../src/store/sql.js";
import { Workers } from "../../src/workers/workers.js";
import { workersQueries } from "../../src/workers/queries.js";
import { IN_PROGRESS, QUEUED, withPg, type BenchDb } from "./world.js";

export type ScenarioName = "baseline" | "A" | "B";

export interface RepoSpec {
  id: string;
  installationId: number;
  maxPerRepo: number;
  maxPerOrg: number;
}

export interface Scenario {
  name: ScenarioName;
  /** For the progress lines and the report. */
  title: string;
  repos: RepoSpec[];
  /** Queued tasks, in queue order: task k is in repoOf(k). */
  queued: number;
  repoOf(k: number): RepoSpec;
  /** Repositories holding one live (claimed) task each for the whole run. */
  live: RepoSpec[];
  /** The repository every claim must come from; null: any. */
  expect: string | null;
}

/** Limits that never refuse a claim here (10000 is the schema's maximum per organization). */
const OPEN = { maxPerRepo: 1000, maxPerOrg: 10000 };

export function scenarios(tasks: number): Scenario[] {
  const base: RepoSpec = { id: "acme/base", installationId: 1, ...OPEN };
  const full: RepoSpec = { id: "acme/full", installationId: 1, maxPerRepo: 1, maxPerOrg: 10000 };
  const open: RepoSpec = { id: "acme/open", installationId: 1, ...OPEN };
  // 100 repositories, 20 per installation, one organization per installation.
  const spread: RepoSpec[] = Array.from({ length: 100 }, (_, i) => {
    const installationId = 1 + Math.floor(i / 20);
    return { id: `org${installationId}/r${String(i).padStart(2, "0")}`, installationId, ...OPEN };
  });
  return [
    {
      name: "baseline",
      title: `100 queued tasks in ${base.id}`,
      repos: [base],
      queued: 100,
      repoOf: () => base,
      live: [],
      expect: base.id,
    },
    {
      name: "A",
      title: `${tasks} queued tasks in ${full.id} (maxPerRepo 1, 1 live claim: at its limit), then 1 in ${open.id}, queued last`,
      repos: [full, open],
      queued: tasks + 1,
      repoOf: (k) => (k < tasks ? full : open),
      live: [full],
      expect: open.id,
    },
    {
      name: "B",
      title: `${tasks} queued tasks over ${spread.length} repositories and 5 installations, none gated`,
      repos: spread,
      queued: tasks,
      repoOf: (k) => spread[k % spread.length]!,
      live: [],
      expect: null,
    },
  ];
}

/** The configuration each repository's row was recorded from, checked with the service's own parser. */
export function configOf(r: RepoSpec): ConfigResult {
  const cfg = parseRepoConfig({
    limits: { maxConcurrentPerRepo: r.maxPerRepo, maxConcurrentPerOrg: r.maxPerOrg, leaseSeconds: 3600 },
  });
  if (!cfg.ok)
    throw new Error(`the bench's configuration of ${r.id} is not valid for this build: ${cfg.problems.join("; ")}`);
  return cfg;
}

/**
 * PostgreSQL databases this run created, registered before CREATE DATABASE is
 * sent: a signal that arrives while it is in flight waits for it and drops
 * the database, instead of leaving one nobody knows about.
 */
const created = new Map<string, { pgUrl: string; creating: Promise<unknown> }>();

async function dropCreated(name: string): Promise<void> {
  const c = created.get(name);
  if (!c) return;
  await c.creating.catch(() => {});
  await withPg(c.pgUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  created.delete(name);
}

/** Drops every PostgreSQL database this run created and has not dropped yet (end, signal and deadline paths). */
export async function dropAllCreated(): Promise<void> {
  await Promise.allSettled([...created.keys()].map(dropCreated));
}

/** A new SQLite file in `dir`, or a new database on the PostgreSQL server `pgUrl` names. */
async function freshDb(dir: string, pgUrl: string | null): Promise<BenchDb> {
  if (!pgUrl) {
    const url = `file:${join(dir, "orchestra.db")}`;
    return { url, where: url, drop: async () => {} };
  }
  const name = `orchestra_bench_${randomBytes(6).toString("hex")}`;
  const creating = withPg(pgUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  created.set(name, { pgUrl, creating });
  await creating;
  const u = new URL(pgUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), where: redact(u.toString()), drop: () => dropCreated(name) };
}

export interface World {
  bench: BenchDb;
  database: Database;
  claims: Claims;
  workerId: string;
  close(): Promise<void>;
}

const BATCH = 1000;

/**
 * A fresh database (a SQLite file in `dir`, or a new PostgreSQL database on
 * `pgUrl`), migrated by the service's own `migrate`, with the scenario's
 * Repo rows (the columns `RepoGates.record` writes from the configuration),
 * its queued tasks (blockers read, none open; queuedAt ascending) in batches
 * of 1000, and its live claims.
 */
export async function buildWorld(
  s: Scenario,
  dir: string,
  pgUrl: string | null,
  progress: (line: string) => void,
): Promise<World> {
  const bench = await freshDb(dir, pgUrl);
  let database: Database | null = null;
  try {
    database = await openDatabase(bench.url);
    await migrate(database);
    const db = database.db;
    const now = new Date();
    const configs = new Map(s.repos.map((r) => [r.id, configOf(r)]));
    await db.repo.createMany({
      data: s.repos.map((r) => ({
        id: r.id,
        installationId: r.installationId,
        owner: r.id.split("/")[0]!,
        ...gateColumns(configs.get(r.id)!),
        configAt: now,
        updatedAt: now,
      })),
    });
    const issues = new Map<string, number>();
    const nextIssue = (repo: string): number => {
      const n = (issues.get(repo) ?? 0) + 1;
      issues.set(repo, n);
      return n;
    };
    const firstQueued = now.getTime() - s.queued * 10 - 60_000;
    for (let from = 0; from < s.queued; from += BATCH) {
      const data = [];
      for (let k = from; k < Math.min(s.queued, from + BATCH); k++) {
        const r = s.repoOf(k);
        const issue = nextIssue(r.id);
        data.push({
          id: randomUUID(),
          installationId: r.installationId,
          repo: r.id,
          issue,
          title: `Task ${issue} of ${r.id}`,
          body: "bench",
          state: "queued",
          attempt: 0,
          priority: 1000,
          queuedAt: new Date(firstQueued + k * 10),
          branch: `agent/issue-${issue}`,
          label: QUEUED,
          blockersAt: now,
          createdAt: now,
          updatedAt: now,
        });
      }
      await db.task.createMany({ data });
      progress(`seeded ${Math.min(s.queued, from + BATCH)}/${s.queued} queued tasks`);
    }
    const workers = new Workers(workersQueries(db), { now: () => new Date() });
    for (const r of s.live) {
      // Someone else's live claim: the repository's one slot is taken for the whole run.
      const { id: holder } = await workers.register(`holder of ${r.id}`, undefined);
      const issue = nextIssue(r.id);
      const taskId = randomUUID();
      const runId = randomUUID();
      const leaseEpoch = randomUUID();
      const leaseExpiresAt = new Date(now.getTime() + 3600_000);
      await db.task.create({
        data: {
          id: taskId,
          installationId: r.installationId,
          repo: r.id,
          issue,
          title: `Task ${issue} of ${r.id}`,
          body: "bench",
          state: "claimed",
          attempt: 1,
          priority: 1000,
          queuedAt: new Date(firstQueued - 10),
          branch: `agent/issue-${issue}`,
          runId,
          leaseEpoch,
          leaseExpiresAt,
          workerId: holder,
          label: IN_PROGRESS,
          blockersAt: now,
          version: 1,
          createdAt: now,
          updatedAt: now,
        },
      });
      await db.run.create({
        data: {
          id: runId,
          taskId,
          attempt: 1,
          workerId: holder,
          mode: "worker",
          state: "live",
          leaseEpoch,
          leaseExpiresAt,
          branch: `agent/issue-${issue}`,
          startedAt: now,
          progressAt: now,
        },
      });
      progress(`${r.id}: 1 live claim (maxPerRepo ${r.maxPerRepo})`);
    }
    if (database.provider === "postgresql") {
      // Autovacuum analyzes tables after inserts like these within about a minute.
      await db.$executeRawUnsafe(`ANALYZE "Task"`);
      await db.$executeRawUnsafe(`ANALYZE "Repo"`);
    }
    const { id: workerId } = await workers.register("bench", undefined);
    const d = database;
    return {
      bench,
      database: d,
      claims: claimsFor(d, configs),
      workerId,
      close: async () => {
        await d.close();
        await bench.drop();
      },
    };
  } catch (e) {
    await database?.close().catch(() => {});
    await bench.drop().catch(() => {});
    throw e;
  }
}

/**
 * The service as src/app.ts wires it, except the configuration port: the
 * App's ConfigLoader answers from its cache (60 s) after the first read from
 * GitHub; here every answer is that cache hit. Effects are written to the
 * outbox and nothing performs them.
 */
function claimsFor(database: Database, configs: Map<string, ConfigResult>): Claims {
  const clock = { now: () => new Date() };
  const port = {
    get: async (_installationId: number, repo: string): Promise<ConfigResult> =>
      configs.get(repo) ?? { ok: false, problems: [`no configuration for ${repo}`] },
  };
  const tasks = new Tasks({
    db: database.db,
    database,
    configs: port,
    log: pino({ level: "silent" }),
    clock,
    dryRun: false,
    onEffects: () => {},
  });
  const queries = claimRows(database.db);
  return new Claims({
    queries,
    database,
    tasks,
    workers: new Workers(workersQueries(database.db), clock),
    decisions: new Decisions(queries, database, clock),
    configs: port,
    clock,
  });
}

/**
 * Puts a task the bench just claimed back in the queue as it was seeded: its
 * run, effects and decisions deleted, its lease cleared. Outside the timed
 * part; every claim sees the same world.
 */
export async function release(database: Database, taskId: string): Promise<void> {
  await atomically(database, [
    { sql: `DELETE FROM "Run" WHERE "taskId" = ?`, args: [taskId] },
    { sql: `DELETE FROM "Effect" WHERE "taskId" = ?`, args: [taskId] },
    { sql: `DELETE FROM "Decision" WHERE "taskId" = ?`, args: [taskId] },
    {
      sql: `UPDATE "Task" SET "state" = 'queued', "attempt" = 0, "runId" = NULL, "leaseEpoch" = NULL, "leaseExpiresAt" = NULL, "workerId" = NULL, "label" = ?, "version" = 0 WHERE "id" = ?`,
      args: [QUEUED, taskId],
      check: (r) => (r.changes === 1 ? null : `task ${taskId} to release is gone`),
    },
  ]);
}

/** One statement exactly as the service sends it (placeholders and bound values). */
interface Captured {
  sql: string;
  args: unknown[];
  argTypes?: SqlQuery["argTypes"];
}

/**
 * A stand-in for the database that records the statements the claim's query
 * functions send and answers each with no rows: the plans below are of the
 * very SQL the service builds, whatever it becomes.
 */
function recorder(provider: Database["provider"]): { database: Pick<Database, "raw" | "provider">; sent: Captured[] } {
  const sent: Captured[] = [];
  const raw =
    provider === "sqlite"
      ? {
          client: {
            prepare: (sql: string) => ({
              reader: true,
              all: (...args: unknown[]) => (sent.push({ sql, args }), []),
              run: () => ({ changes: 0 }),
            }),
            transaction: (fn: () => void) => fn,
          },
        }
      : {
          queryRaw: async (q: SqlQuery) => (
            sent.push({ sql: q.sql, args: q.args, argTypes: q.argTypes }),
            { columnNames: [], columnTypes: [], rows: [] }
          ),
        };
  return { database: { provider, raw: raw as unknown as SqlDriverAdapter }, sent };
}

/** The claim's first window, as `Claims.next` asks for it (WINDOW in src/claims/claims.ts). */
export const WINDOW = 25;

export interface ClaimQueries {
  live: Captured;
  turn: Captured;
  candidates: Captured;
}

/** The three statements of a claim's first look: live leases per installation, the installations in turn, the candidates of `installationId`. */
export async function claimQueries(
  provider: Database["provider"],
  installationId: number,
  now: Date,
): Promise<ClaimQueries> {
  const rec = recorder(provider);
  await liveByInstallation(rec.database);
  await installationsInTurn(rec.database, new Map());
  await candidates(rec.database, installationId, { mode: "worker", now, repos: null, skip: [], limit: WINDOW });
  const [live, turn, cand] = rec.sent;
  if (!live || !turn || !cand)
    throw new Error(`expected 3 statements from the claim's query functions, got ${rec.sent.length}`);
  return { live, turn, candidates: cand };
}

/** Runs a captured statement (or EXPLAIN of it) on the real database. */
async function run(database: Database, q: Captured, prefix = ""): Promise<unknown[][]> {
  if (database.provider === "sqlite") {
    const client = (
      database.raw as unknown as {
        client: { prepare(sql: string): { raw(on: boolean): { all(...a: unknown[]): unknown[][] } } };
      }
    ).client;
    return client
      .prepare(prefix + q.sql)
      .raw(true)
      .all(...q.args);
  }
  const r = await database.raw.queryRaw({ sql: prefix + q.sql, args: q.args, argTypes: q.argTypes ?? [] });
  return r.rows;
}

/** Runs a captured statement once and says how many rows it returned (the timed "query alone" figures). */
export async function runQuery(database: Database, q: Captured): Promise<number> {
  return (await run(database, q)).length;
}

/** SQLite: EXPLAIN QUERY PLAN as a tree; PostgreSQL: EXPLAIN, or EXPLAIN (ANALYZE, BUFFERS) with `analyze`. */
export async function explain(database: Database, q: Captured, analyze = false): Promise<string[]> {
  if (database.provider === "sqlite") {
    const rows = (await run(database, q, "EXPLAIN QUERY PLAN ")) as [number, number, number, string][];
    const depth = new Map<number, number>();
    return rows.map(([id, parent, , detail]) => {
      const d = parent === 0 ? 0 : (depth.get(parent) ?? 0) + 1;
      depth.set(id, d);
      return `${"  ".repeat(d)}${detail}`;
    });
  }
  const rows = await run(database, q, analyze ? "EXPLAIN (ANALYZE, BUFFERS) " : "EXPLAIN ");
  return rows.map((r) => String(r[0]));
}

/** The index the claim query is meant to walk. */
export const CLAIM_INDEX = "Task_state_installationId_priority_queuedAt_repo_idx";

export interface QueuedScan {
  /** The plan's node that reads the queued tasks (alias t), without costs. */
  node: string;
  /** It reads them through CLAIM_INDEX. */
  indexed: boolean;
  /** The rows it reads are sorted afterwards: every matching row is read before the first is returned. */
  sorted: boolean;
}

/**
 * How the candidate plan reads the queued tasks (alias t in the query; the
 * limit counts in the CTEs read the claimed ones, often through the same
 * index, which says nothing about the queue).
 */
export function queuedScan(provider: Database["provider"], plan: string[]): QueuedScan {
  const strip = (l: string): string => l.replace(/\s+\(cost=.*$/, "").replace(/^\s*(->\s*)?/, "");
  if (provider === "sqlite") {
    const line = plan.find((l) => /^\s*(SEARCH|SCAN) t\b/.test(l)) ?? "";
    return {
      node: strip(line),
      indexed: line.includes(CLAIM_INDEX),
      sorted: plan.some((l) => /TEMP B-TREE FOR ORDER BY/.test(l)),
    };
  }
  const at = plan.findIndex((l) => /on "Task" t(\s|$)/.test(l));
  const line = at >= 0 ? plan[at]! : "";
  const bitmap = /Bitmap Heap Scan/.test(line)
    ? (plan.slice(at + 1).find((l) => /Bitmap Index Scan on/.test(l)) ?? "")
    : "";
  return {
    node: strip(line) + (bitmap ? ` via ${strip(bitmap)}` : ""),
    indexed: (line + bitmap).includes(CLAIM_INDEX),
    sorted: plan.some((l) => /Sort Key: t\.priority/.test(l)),
  };
}
