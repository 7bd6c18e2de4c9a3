// The dashboard benchmark's worlds: a fleet seeded straight into a fresh
// database, in every state the overview shows. Most tasks are queued across
// the repositories; some are claimed with live leases and live runs, some
// blocked on an open question, some failed with classified runs, some done;
// ended runs are spread over the last 24 hours so the runs-by-class chart has
// data; a few deliveries and effects are parked, and the done ones are there
// as history. The shape is the same at every size: a world of 100 tasks and
// one of 5,000 differ in size only, so their ratio says how the pages scale.
import { createHash, randomUUID } from "node:crypto";
import type { Prisma } from "../../src/store/generated/sqlite/client.js";
import { gateColumns } from "../../src/gates/repos.js";
import { openDatabase } from "../../src/store/db.js";
import { migrate } from "../../src/store/migrate.js";
import { CALLS_PREFIX, hourKey } from "../../src/metrics/call-hours.js";
import { configOf } from "../claims/backlog-world.js";
import { IN_PROGRESS, QUEUED } from "../claims/world.js";

export const INSTALLATION = 1;
export const OWNER = "acme";
const HOUR = 3_600_000;

/** Shares of the tasks in each state; the rest are queued. */
export const SHARES = { claimed: 0.02, blocked: 0.02, failed: 0.04, done: 0.1 } as const;
/** Parked deliveries and effects, whatever the size. */
export const PARKED = 5;
/** Registered workers, whatever the size; every other one is limited to a few repositories. */
export const WORKERS = 10;

export interface WorldSpec {
  name: string;
  tasks: number;
  repos: number;
}

export interface WorldFacts {
  tasks: Record<"queued" | "claimed" | "blocked" | "failed" | "done", number>;
  repos: number;
  runs: number;
  /** Runs that ended in the last 24 hours (the chart's window). */
  endedRuns: number;
  decisions: number;
  effects: number;
  deliveries: number;
  /** The task the task page is measured on: failed, with 3 runs, a decision and 3 effects, in every world. */
  probe: { id: string; repo: string; issue: number; runs: number };
  seedS: number;
}

/** Failure classes with the recovery each names, and a `why` as the classifier writes it. */
const FAILURES = [
  {
    class: "phantom",
    recovery: "delete-branch-requeue",
    why: "the run reported success (exit 0) but GitHub shows no pull request and the branch has no commits",
  },
  {
    class: "checks-failed",
    recovery: "continue-fix-checks",
    why: "2 required checks failed on the pull request's head: test (ubuntu-latest), lint",
  },
  { class: "infra", recovery: "escalate", why: "infrastructure failures persist after 2 rerun(s) of this commit" },
  { class: "merge-conflict", recovery: "continue-rebase", why: "the base moved and pull request #41 conflicts" },
  {
    class: "debris-empty",
    recovery: "delete-branch-requeue",
    why: "no pull request and the branch was never pushed; nothing reported dirty",
  },
  {
    class: "unknown",
    recovery: "escalate",
    why: "exit 1 with no pull request, no question and nothing the classifier recognises",
  },
] as const;

/** An issue body of about 1 KB, as issues written for agents tend to be: the lists read whole rows, bodies included. */
const issueBody = (repo: string, issue: number): string =>
  [
    `## What`,
    `The widget in ${repo} reads its settings from constants. Make them configurable through the existing config file, with the current values as defaults.`,
    `## Acceptance`,
    `- every setting in src/widget/constants.ts can be set in config.yml`,
    `- the defaults do not change behaviour for anyone who sets nothing`,
    `- a setting with the wrong type is reported at start-up with its path`,
    `- the README's configuration table lists the new settings`,
    `## Notes`,
    `Issue #${issue}. Keep the public API unchanged; tests go beside the existing ones in test/widget/. `.repeat(4),
    `See the discussion in the linked issues for the names the maintainers prefer.`,
  ].join("\n\n");

const STEPS = ["reading the issue", "running the tests", "editing src/", "opening the pull request", "fixing lint"];

export const repoName = (i: number): string => `${OWNER}/r${String(i).padStart(2, "0")}`;

/** A deterministic spread in [0, 1) for index `i` (so both worlds have the same shape, not the same random draw). */
const spread = (i: number, salt: string): number =>
  createHash("sha256").update(`${salt}:${i}`).digest().readUInt32BE(0) / 2 ** 32;

/** How many tasks of each state a world of `tasks` has: each share rounded, at least 1, queued the rest. */
export function split(tasks: number): WorldFacts["tasks"] {
  const n = (share: number) => Math.max(1, Math.round(tasks * share));
  const claimed = n(SHARES.claimed);
  const blocked = n(SHARES.blocked);
  const failed = n(SHARES.failed);
  const done = n(SHARES.done);
  const queued = tasks - claimed - blocked - failed - done;
  if (queued < 1) throw new Error(`a world needs at least ${tasks - queued + 1} tasks`);
  return { queued, claimed, blocked, failed, done };
}

const BATCH = 500;

/**
 * Migrates the database `url` (the service's own `migrate`) and seeds the
 * world. Nothing seeded is work the service would pick up in the background:
 * no pending delivery or effect, every queued task's blockers read, every
 * ended run classified and its recovery done, every live lease an hour from
 * expiry, no question with a condition or an expiry. So the figures are the
 * pages', not a sweep's.
 */
export async function seedWorld(url: string, spec: WorldSpec, progress: (line: string) => void): Promise<WorldFacts> {
  const t0 = Date.now();
  const database = await openDatabase(url);
  try {
    await migrate(database);
    const db = database.db;
    const now = new Date();
    const at = (msAgo: number) => new Date(now.getTime() - msAgo);
    const split_ = split(spec.tasks);

    const repos = Array.from({ length: spec.repos }, (_, i) => repoName(i));
    const cfg = configOf({ id: repos[0]!, installationId: INSTALLATION, maxPerRepo: 1000, maxPerOrg: 10000 });
    await db.repo.createMany({
      data: repos.map((id) => ({
        id,
        installationId: INSTALLATION,
        owner: OWNER,
        ...gateColumns(cfg),
        configAt: now,
        updatedAt: now,
      })),
    });

    const workers = Array.from({ length: WORKERS }, (_, i) => ({
      id: randomUUID(),
      name: `builder-${i + 1}`,
      tokenHash: createHash("sha256").update(randomUUID()).digest("hex"),
      repos:
        i % 2 === 0
          ? null
          : JSON.stringify(repos.filter((_, r) => r % WORKERS === i || r % WORKERS === (i + 1) % WORKERS)),
      createdAt: at(7 * 24 * HOUR),
      lastSeenAt: now,
      tokenHint: String(1000 + i),
    }));
    await db.worker.createMany({ data: workers });

    // Tasks go round the repositories; the states are interleaved so each repository has some of each.
    const order: Array<keyof WorldFacts["tasks"]> = [];
    const left = { ...split_ };
    for (let k = 0; k < spec.tasks; k++) {
      // Largest remaining share first, weighted by its total, so the states mix evenly.
      let pick: keyof WorldFacts["tasks"] = "queued";
      let best = -Infinity;
      for (const s of Object.keys(left) as Array<keyof WorldFacts["tasks"]>) {
        if (left[s] === 0) continue;
        const score = left[s] / split_[s];
        if (score > best) {
          best = score;
          pick = s;
        }
      }
      order.push(pick);
      left[pick]--;
    }

    const tasks: Prisma.TaskCreateManyInput[] = [];
    const runs: Prisma.RunCreateManyInput[] = [];
    const decisions: Prisma.DecisionCreateManyInput[] = [];
    const effects: Prisma.EffectCreateManyInput[] = [];
    const deliveries: Prisma.DeliveryCreateManyInput[] = [];
    const issues = new Map<string, number>();
    let runNo = 0;
    let effectNo = 0;
    let probe: WorldFacts["probe"] | null = null;

    /** An ended run, its end spread over the last 24 hours. */
    const endedRun = (
      taskId: string,
      attempt: number,
      branch: string,
      f: { class: string; recovery: string | null; why: string },
    ): Prisma.RunCreateManyInput & { endedAt: Date } => {
      const i = runNo++;
      const endedAt = at(Math.floor(spread(i, "ended") * 24 * HOUR) + 60_000);
      const startedAt = new Date(endedAt.getTime() - (10 + Math.floor(spread(i, "took") * 50)) * 60_000);
      const errors =
        f.class === "infra" || f.class === "unknown"
          ? [
              {
                at: endedAt.toISOString(),
                class: f.class,
                message: `runner lost: exit 137 after ${attempt} attempt(s)`,
              },
            ]
          : [];
      return {
        id: randomUUID(),
        taskId,
        attempt,
        workerId: workers[i % WORKERS]!.id,
        mode: "worker",
        state: "exited",
        leaseEpoch: randomUUID(),
        leaseExpiresAt: endedAt,
        branch,
        startedAt,
        endedAt,
        endReason: f.class === "merged" ? "exited 0" : "exited 1",
        report: JSON.stringify({ exitCode: f.class === "merged" ? 0 : 1, summary: "bench run" }),
        prNumber: f.class === "merged" || f.class === "checks-failed" ? 100 + i : null,
        class: f.class,
        recovery: f.recovery,
        recoveredAt: f.recovery ? endedAt : null,
        evidence: JSON.stringify({
          why: f.why,
          exitCode: f.class === "merged" ? 0 : 1,
          headSha: createHash("sha1").update(String(i)).digest("hex"),
          checks:
            f.class === "checks-failed"
              ? [
                  { name: "test (ubuntu-latest)", conclusion: "failure" },
                  { name: "lint", conclusion: "failure" },
                ]
              : [],
        }),
        errors: JSON.stringify(errors),
        inputTokens: 20_000 + i,
        outputTokens: 3_000,
        costUsd: 0.12,
        progress: JSON.stringify({ step: STEPS[i % STEPS.length] }),
        progressAt: endedAt,
      };
    };
    const doneEffect = (
      taskId: string,
      repo: string,
      issue: number,
      kind: "label" | "comment",
      createdAt: Date,
    ): Prisma.EffectCreateManyInput => {
      const n = effectNo++;
      return {
        id: randomUUID(),
        key: `bench:${spec.name}:${n}`,
        taskId,
        installationId: INSTALLATION,
        repo,
        kind,
        payload: JSON.stringify(
          kind === "label"
            ? { issue, label: "agent:failed", others: [IN_PROGRESS] }
            : { issue, body: "Orchestra: the run ended without a pull request; see the task for the evidence." },
        ),
        state: "done",
        attempts: 1,
        nextAttemptAt: createdAt,
        createdAt,
        doneAt: new Date(createdAt.getTime() + 1500),
      };
    };

    for (let k = 0; k < spec.tasks; k++) {
      const state = order[k]!;
      const repo = repos[k % repos.length]!;
      const issue = (issues.get(repo) ?? 0) + 1;
      issues.set(repo, issue);
      const id = randomUUID();
      const branch = `agent/issue-${issue}`;
      const queuedAt = at(Math.floor((1 - k / spec.tasks) * 72 * HOUR) + 120_000);
      const base = {
        id,
        installationId: INSTALLATION,
        repo,
        issue,
        title: `Task ${issue} of ${repo}: make the widget configurable`,
        body: issueBody(repo, issue),
        state,
        attempt: 0,
        priority: 1000,
        queuedAt,
        branch,
        blockersAt: now,
        createdAt: queuedAt,
        updatedAt: queuedAt,
      };
      // The delivery that queued it, processed long ago.
      deliveries.push({
        deliveryId: randomUUID(),
        event: "issues",
        action: "labeled",
        installationId: String(INSTALLATION),
        taskKey: `${INSTALLATION}/${repo}#${issue}`,
        payload: JSON.stringify({
          action: "labeled",
          issue: { number: issue },
          label: { name: QUEUED },
          repository: { full_name: repo },
          installation: { id: INSTALLATION },
        }),
        receivedAt: queuedAt,
        state: "done",
        attempts: 1,
        nextAttemptAt: queuedAt,
        processedAt: queuedAt,
      });

      if (state === "queued") {
        const r = spread(k, "queued");
        tasks.push({
          ...base,
          label: QUEUED,
          // A tenth carry a priority label; a few wait for a blocking issue or a backoff.
          priority: r < 0.1 ? Math.floor(r * 30) : 1000,
          ...(r > 0.97 ? { blockedBy: JSON.stringify([`${repo}#${Math.max(1, issue - 1)}`]) } : {}),
          ...(r > 0.94 && r <= 0.97
            ? {
                backoffUntil: new Date(now.getTime() + HOUR),
                backoffCount: 1,
                diagnostic: "dispatch refused: the workflow is disabled",
              }
            : {}),
        });
      } else if (state === "claimed") {
        const worker = workers[k % WORKERS]!;
        const earlier = k % 2; // every other one is on its second attempt
        for (let a = 1; a <= earlier; a++)
          runs.push(
            endedRun(id, a, branch, {
              class: "infra",
              recovery: "rerun-failed-jobs",
              why: "every failing check failed for infrastructure reasons",
            }),
          );
        const runId = randomUUID();
        const leaseEpoch = randomUUID();
        const leaseExpiresAt = new Date(now.getTime() + HOUR + (k % 30) * 60_000);
        const startedAt = at(((k % 40) + 1) * 60_000);
        runs.push({
          id: runId,
          taskId: id,
          attempt: earlier + 1,
          workerId: worker.id,
          mode: "worker",
          state: "live",
          leaseEpoch,
          leaseExpiresAt,
          branch,
          startedAt,
          progress: JSON.stringify({
            headSha: createHash("sha1").update(id).digest("hex"),
            worktree: `/work/${issue}`,
            step: STEPS[k % STEPS.length],
          }),
          progressAt: now,
        });
        tasks.push({
          ...base,
          attempt: earlier + 1,
          runId,
          leaseEpoch,
          leaseExpiresAt,
          workerId: worker.id,
          label: IN_PROGRESS,
          version: 2,
          updatedAt: startedAt,
        });
      } else if (state === "blocked") {
        const run = endedRun(id, 1, branch, {
          class: "question",
          recovery: "block-question",
          why: "the worker asked a human",
        });
        runs.push(run);
        decisions.push({
          id: randomUUID(),
          taskId: id,
          runId: run.id,
          kind: "question",
          body: `Should ${repo} keep the v1 API backwards compatible while issue #${issue} changes it?`,
          author: "builder",
          createdAt: run.endedAt,
        });
        tasks.push({
          ...base,
          attempt: 1,
          label: "agent:blocked",
          diagnostic: "the agent asked a question; answer it on the issue",
          version: 3,
          updatedAt: run.endedAt,
        });
      } else if (state === "failed") {
        const isProbe: boolean = probe === null;
        const attempts: number = isProbe ? 3 : 1 + (k % 3);
        let endedAt = now;
        for (let a = 1; a <= attempts; a++) {
          const f = FAILURES[(k + a) % FAILURES.length]!;
          const run = endedRun(id, a, branch, f);
          runs.push(run);
          endedAt = run.endedAt;
          effects.push(doneEffect(id, repo, issue, a === attempts ? "comment" : "label", endedAt));
        }
        if (isProbe) {
          decisions.push({
            id: randomUUID(),
            taskId: id,
            kind: "correction",
            body: "Keep the old flag as an alias; do not remove it.",
            author: "alice",
            source: `comment:${spec.name}:probe`,
            createdAt: at(30 * HOUR),
          });
          probe = { id, repo, issue, runs: attempts };
        }
        tasks.push({
          ...base,
          attempt: attempts,
          label: "agent:failed",
          diagnostic: `gave up after ${attempts} attempt(s)`,
          version: 2 * attempts,
          updatedAt: endedAt,
        });
      } else {
        const run = endedRun(id, 1, branch, {
          class: "merged",
          recovery: null,
          why: `pull request #${100 + runNo} is merged`,
        });
        runs.push(run);
        effects.push(doneEffect(id, repo, issue, "label", run.endedAt));
        tasks.push({
          ...base,
          attempt: 1,
          label: null,
          prNumber: run.prNumber ?? null,
          version: 4,
          updatedAt: run.endedAt,
        });
      }
    }

    // Parked rows: deliveries whose processing kept failing, effects GitHub kept refusing.
    const failedTasks = tasks.filter((t) => t.state === "failed");
    for (let i = 0; i < PARKED; i++) {
      const when = at((i + 1) * 2 * HOUR);
      const errors = JSON.stringify([
        { at: when.toISOString(), class: "github-422", message: "Validation Failed: the label does not exist" },
      ]);
      deliveries.push({
        deliveryId: randomUUID(),
        event: "issue_comment",
        action: "created",
        installationId: String(INSTALLATION),
        taskKey: `${INSTALLATION}/${repos[i % repos.length]}#${i + 1}`,
        payload: JSON.stringify({ action: "created", comment: { id: i, body: "orchestra retry" } }),
        receivedAt: when,
        state: "parked",
        attempts: 5,
        nextAttemptAt: when,
        errors,
        firstFailedAt: when,
      });
      const t = failedTasks[i % failedTasks.length]!;
      effects.push({
        id: randomUUID(),
        key: `bench:${spec.name}:parked:${i}`,
        taskId: t.id,
        installationId: INSTALLATION,
        repo: t.repo,
        kind: "comment",
        payload: JSON.stringify({ issue: t.issue, body: "Orchestra: this task failed." }),
        state: "parked",
        attempts: 5,
        nextAttemptAt: when,
        errors,
        note: "GitHub answered 422 five times; replay it once the cause is fixed",
        createdAt: when,
      });
    }

    // GitHub calls per hour over the last day (the second chart).
    const counters = Array.from({ length: 24 }, (_, h) => hourKey(at(h * HOUR))).flatMap((key, h) => [
      { name: `${CALLS_PREFIX}${key}.read`, value: 200 + h * 7, updatedAt: now },
      { name: `${CALLS_PREFIX}${key}.write`, value: 40 + h, updatedAt: now },
    ]);

    const insert = async <T>(what: string, rows: T[], create: (data: T[]) => Promise<unknown>) => {
      for (let from = 0; from < rows.length; from += BATCH) await create(rows.slice(from, from + BATCH));
      progress(`${rows.length} ${what}`);
    };
    await insert("tasks", tasks, (data) => db.task.createMany({ data }));
    await insert("runs", runs, (data) => db.run.createMany({ data }));
    await insert("decisions", decisions, (data) => db.decision.createMany({ data }));
    await insert("effects", effects, (data) => db.effect.createMany({ data }));
    await insert("deliveries", deliveries, (data) => db.delivery.createMany({ data }));
    await db.counter.createMany({ data: counters });
    if (database.provider === "postgresql") {
      // Autovacuum analyzes tables after inserts like these within about a minute.
      for (const table of ["Task", "Run", "Decision", "Effect", "Delivery", "Worker", "Repo"])
        await db.$executeRawUnsafe(`ANALYZE "${table}"`);
    }
    const dayAgo = now.getTime() - 24 * HOUR;
    return {
      tasks: split_,
      repos: repos.length,
      runs: runs.length,
      endedRuns: runs.filter((r) => r.endedAt && new Date(r.endedAt).getTime() >= dayAgo).length,
      decisions: decisions.length,
      effects: effects.length,
      deliveries: deliveries.length,
      probe: probe!,
      seedS: (Date.now() - t0) / 1000,
    };
  } finally {
    await database.close();
  }
}
