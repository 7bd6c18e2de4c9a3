// What the claim benchmark runs against: the fake GitHub (one installation,
// its repositories and queued issues), a fresh database per configuration
// seeded with the matching queued tasks, and the checks read back from that
// database afterwards (runs per task, the candidate query's plan, the outbox).
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { startFakeGitHub, type FakeGitHub } from "../../test/fake-github/index.js";
import { openDatabase, redact, type Database } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { parseRepoConfig, type ConfigResult } from "../../src/config/repo.js";
import { gateColumns } from "../../src/gates/repos.js";
import { candidateSql } from "../../src/claims/candidates.js";
import { select } from "../../src/store/sql.js";

export const INSTALLATION = 1;
export const OWNER = "acme";
export const QUEUED = "agent:queued";
export const IN_PROGRESS = "agent:in-progress";

// Limits high enough that they never refuse a claim here. The schema caps
// maxConcurrentPerOrg at 10000 (a larger value makes the whole config invalid
// and pauses every repository, i.e. every claim answers 204), so that is the
// value used; it is checked below with the service's own parser.
const LIMITS = { maxConcurrentPerRepo: 1000, maxConcurrentPerOrg: 10000, leaseSeconds: 3600 };
export const CONFIG_YAML = `limits:\n${Object.entries(LIMITS)
  .map(([k, v]) => `  ${k}: ${v}\n`)
  .join("")}`;

export function checkConfig(): ConfigResult {
  const r = parseRepoConfig({ limits: LIMITS });
  if (!r.ok) throw new Error(`the bench's .github/orchestra.yml is not valid for this build: ${r.problems.join("; ")}`);
  return r;
}

export interface Layout {
  tasks: number;
  repos: number;
}

export const repoName = (i: number): string => `${OWNER}/r${String(i).padStart(3, "0")}`;

/**
 * Task k lives in repository k mod repos, as issue k div repos + 1, and was
 * queued k-th: claims in queue order go round the repositories, so the first
 * `repos` claims touch (and load the config of) every repository once.
 */
export function slot(k: number, l: Layout): { repo: string; issue: number } {
  return { repo: repoName(k % l.repos), issue: Math.floor(k / l.repos) + 1 };
}

export async function startFake(l: Layout): Promise<FakeGitHub> {
  const fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, OWNER);
  for (let i = 0; i < l.repos; i++) {
    fake.state.addRepo(repoName(i), { installationId: INSTALLATION });
    fake.state.setFile(repoName(i), ".github/orchestra.yml", CONFIG_YAML);
  }
  for (let k = 0; k < l.tasks; k++) {
    const { repo, issue } = slot(k, l);
    fake.state.addIssue(repo, {
      number: issue,
      title: `Task ${issue} of ${repo}`,
      body: "bench",
      labels: [QUEUED],
      user: "alice",
    });
  }
  return fake;
}

export interface BenchDb {
  url: string;
  /** For logs and results: no credentials. */
  where: string;
  drop(): Promise<void>;
}

const liveDatabases = new Map<string, () => Promise<void>>();

/** Drops every PostgreSQL database still registered (signal and deadline paths). */
export async function dropAllDatabases(): Promise<void> {
  await Promise.allSettled([...liveDatabases.values()].map((drop) => drop()));
}

export async function withPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A new SQLite file in `dir`, or a new database on the PostgreSQL server `pgUrl` names. */
export async function freshDatabase(dir: string, pgUrl: string | null): Promise<BenchDb> {
  if (!pgUrl) {
    const url = `file:${join(dir, "orchestra.db")}`;
    return { url, where: url, drop: async () => {} };
  }
  const name = `orchestra_bench_${randomBytes(6).toString("hex")}`;
  await withPg(pgUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(pgUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const drop = async (): Promise<void> => {
    liveDatabases.delete(name);
    await withPg(pgUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  liveDatabases.set(name, drop);
  return { url, where: redact(url), drop };
}

const BATCH = 1000;

/**
 * Migrates and inserts what the queue-label webhooks would have left: each
 * repository's row with the gates of its configuration (the columns
 * `RepoGates.record` writes when the configuration is read), and `tasks`
 * queued rows matching the fake's issues, their blockers read (none open).
 */
export async function seed(url: string, l: Layout, progress: (line: string) => void): Promise<void> {
  const database = await openDatabase(url);
  try {
    await migrate(database);
    const now = Date.now();
    const gates = gateColumns(checkConfig());
    await database.db.repo.createMany({
      data: Array.from({ length: l.repos }, (_, i) => ({
        id: repoName(i),
        installationId: INSTALLATION,
        owner: OWNER,
        ...gates,
        configAt: new Date(now),
        updatedAt: new Date(now),
      })),
    });
    const firstQueued = now - l.tasks * 10 - 60_000;
    for (let from = 0; from < l.tasks; from += BATCH) {
      const data = [];
      for (let k = from; k < Math.min(l.tasks, from + BATCH); k++) {
        const { repo, issue } = slot(k, l);
        data.push({
          id: randomUUID(),
          installationId: INSTALLATION,
          repo,
          issue,
          title: `Task ${issue} of ${repo}`,
          body: "bench",
          state: "queued",
          attempt: 0,
          priority: 1000,
          queuedAt: new Date(firstQueued + k * 10),
          branch: `agent/issue-${issue}`,
          label: QUEUED,
          blockersAt: new Date(now),
          createdAt: new Date(now),
          updatedAt: new Date(now),
        });
      }
      await database.db.task.createMany({ data });
      progress(`seeded ${Math.min(l.tasks, from + BATCH)}/${l.tasks} queued tasks`);
    }
    if (database.provider === "postgresql") {
      // Autovacuum analyzes a table after an insert like this within about a
      // minute; the App would otherwise plan its first claims without statistics.
      await database.db.$executeRawUnsafe(`ANALYZE "Task"`);
    }
  } finally {
    await database.close();
  }
}

export interface Plan {
  lines: string[];
  key: string;
  /**
   * The plan sorts the candidates instead of walking the queue's index in
   * order: it reads every claimable row before it can answer, so a claim's
   * cost grows with the queue.
   */
  fullScanSort: boolean;
}

/** The plan of the query `Claims.claim` runs for a worker with no repository list (the service's own SQL). */
export async function explainCandidates(url: string): Promise<Plan> {
  return withDatabase(url, async (database) => {
    const q = candidateSql(database.provider, INSTALLATION, {
      mode: "worker",
      now: new Date(),
      repos: null,
      skip: [],
      limit: 25,
    });
    if (database.provider === "sqlite") {
      const rows = await select(database, `EXPLAIN QUERY PLAN ${q.sql}`, q.args);
      const lines = rows.map((r) => String(r["detail"]));
      const key =
        lines.find((l) => /\bTask\b.*\bt\b|\bTask AS t\b/.test(l)) ?? lines.find((l) => /\bTask\b/.test(l)) ?? "";
      return {
        lines,
        key,
        fullScanSort: lines.some((l) => /TEMP B-TREE FOR ORDER BY/.test(l)),
      };
    }
    const rows = await select(database, `EXPLAIN ${q.sql}`, q.args);
    const lines = rows.map((r) => String(Object.values(r)[0] ?? ""));
    const key = lines.find((l) => /Scan .* on "?Task"? t\b/.test(l)) ?? lines.find((l) => /Scan/.test(l)) ?? "";
    return {
      lines,
      key: key.trim(),
      fullScanSort: lines.some((l) => /Sort Key: t\.priority/.test(l)),
    };
  });
}

export interface StoreCheck {
  runs: number;
  tasksWithRuns: number;
  /** Tasks with more than one Run row: double claims. Must be 0. */
  tasksWithSeveralRuns: number;
  claimedTasks: number;
  queuedTasks: number;
  /** Label effects by state (pending, running, done ...). */
  labelEffects: Record<string, number>;
}

export async function checkStore(url: string): Promise<StoreCheck> {
  return withDatabase(url, async ({ db }) => {
    const one = async (sql: string): Promise<number> =>
      Number(Object.values((await db.$queryRawUnsafe<Record<string, unknown>[]>(sql))[0] ?? {})[0] ?? NaN);
    const effects = await db.$queryRawUnsafe<{ state: string; n: unknown }[]>(
      `SELECT "state", count(*) AS n FROM "Effect" WHERE "kind" = 'label' GROUP BY "state"`,
    );
    return {
      runs: await one(`SELECT count(*) FROM "Run"`),
      tasksWithRuns: await one(`SELECT count(DISTINCT "taskId") FROM "Run"`),
      tasksWithSeveralRuns: await one(
        `SELECT count(*) FROM (SELECT "taskId" FROM "Run" GROUP BY "taskId" HAVING count(*) > 1) AS d`,
      ),
      claimedTasks: await one(`SELECT count(*) FROM "Task" WHERE "state" = 'claimed'`),
      queuedTasks: await one(`SELECT count(*) FROM "Task" WHERE "state" = 'queued'`),
      labelEffects: Object.fromEntries(effects.map((e) => [e.state, Number(e.n)])),
    };
  });
}

async function withDatabase<T>(url: string, fn: (d: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(url, { poolSize: 1 });
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}
