// One fleet run: a database, R replicas behind a front, W real `orchestra worker` processes with a shell
// script as their agent, N issues queued at once; with two or more replicas one is killed with SIGKILL once
// half the pull requests are merged, and started again. Ends when every PR is merged and GitHub's labels
// have converged (no closed issue carries an agent:* label, no GitHub write is pending).
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Child } from "../../demo/children.js";
import { GIT_ENV } from "../../demo/demo.js";
import { freshDatabase } from "../claims/world.js";
import { makeTempDir, removeTempDir, sleep } from "../ingest/targets.js";
import { startFront } from "./front.js";
import { REPO, startFleetGitHub } from "./github.js";
import { Replica } from "./replicas.js";
import { seedBacklog } from "./backlog.js";
import type { RecordedRequest } from "../../test/fake-github/http.js";
import { nodeId } from "../../test/fake-github/json.js";
import type { Repo } from "../../test/fake-github/state.js";

export interface ScenarioConfig {
  name: string;
  replicas: number;
  pgUrl: string | null;
  tasks: number;
  workers: number;
  root: string;
  /** GitHub writes already waiting in the installation's outbox when the issues are queued (bench/fleet/backlog.ts). */
  backlog: number;
  /** How long the stand-in agent works on each task before it commits. */
  agentSeconds: number;
  /** Gives up after this long (ms). */
  timeoutMs: number;
}

export interface ScenarioRaw {
  config: Omit<ScenarioConfig, "pgUrl" | "root">;
  queuedAt: number;
  merges: number[];
  /** First claim of each task (run startedAt), by issue. */
  claims: Map<number, number>;
  requests: RecordedRequest[];
  /** What the node ids in GraphQL label writes name: the repository's issues by number, its labels by name. */
  nodes: { issues: Record<string, number>; labels: Record<string, string> };
  /** When no closed issue carried an agent:* label any more, after the last merge. */
  labelsConvergedAt: number;
  /** When no GitHub write was pending any more (the backlog's included). */
  convergedAt: number;
  doubleClaims: string[];
  restartReadyMs: number | null;
  /** The first release of the killed replica's work by another replica after the kill, or null. */
  takeover: { afterKillMs: number; deliveries: number; effects: number } | null;
  violations: string[];
}

const AGENT = `#!/bin/sh
set -e
journal="$1"
# Agents take their time, some longer than others: between half and one and a half times $2 seconds.
sleep $(( $2 / 2 + ORCHESTRA_ISSUE * 7919 % ($2 + 1) ))
if ! mkdir "$journal/$ORCHESTRA_ISSUE.lock" 2>/dev/null; then echo "$ORCHESTRA_ISSUE" >> "$journal/double"; fi
echo "task $ORCHESTRA_ISSUE" > "task-$ORCHESTRA_ISSUE.txt"
git add "task-$ORCHESTRA_ISSUE.txt"
git commit -qm "Task $ORCHESTRA_ISSUE"
rmdir "$journal/$ORCHESTRA_ISSUE.lock" 2>/dev/null || true
`;

async function api<T>(url: string, token: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

export async function runScenario(c: ScenarioConfig, progress: (line: string) => void): Promise<ScenarioRaw> {
  const dir = makeTempDir(`orchestra-fleet-${c.name}-`);
  const db = await freshDatabase(dir, c.pgUrl);
  let failure: unknown = null;
  const gh = await startFleetGitHub((err) => (failure ??= err));
  const adminToken = randomBytes(32).toString("hex");
  const webhookSecret = randomBytes(20).toString("hex");
  const settings = {
    root: c.root,
    dir,
    databaseUrl: db.url,
    github: { host: gh.fake.host, appId: gh.fake.appId, privateKey: gh.fake.privateKey },
    webhookSecret,
    adminToken,
  };
  const replicas: Replica[] = [];
  const workers: Child[] = [];
  const front = await startFront([]);
  try {
    for (let r = 0; r < c.replicas; r++) {
      const replica = await Replica.create(`replica-${r + 1}`, settings);
      await replica.start();
      replicas.push(replica);
    }
    front.targets.push(...replicas.map((r) => r.url));
    gh.connect(`${front.url}/api/github/webhooks`, webhookSecret);
    const journal = join(dir, "journal");
    mkdirSync(journal);
    const agent = join(dir, "agent.sh");
    writeFileSync(agent, AGENT, { mode: 0o755 });
    for (let w = 0; w < c.workers; w++) {
      const { token } = await api<{ token: string }>(front.url, adminToken, "/api/v1/workers", {
        name: `worker-${w + 1}`,
        repos: [REPO],
      });
      const home = join(dir, `home-${w + 1}`);
      mkdirSync(home);
      const args = ["worker", "--url", front.url, "--workdir", join(dir, `worker-${w + 1}`)];
      args.push(
        "--agent",
        `sh '${agent}' '${journal}' ${c.agentSeconds}`,
        "--poll-seconds",
        "1",
        "--grace-seconds",
        "2",
      );
      workers.push(
        new Child(`worker-${w + 1}`, process.execPath, [join(c.root, "bin", "orchestra.js"), ...args], {
          cwd: dir,
          env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, ...GIT_ENV, ORCHESTRA_WORKER_TOKEN: token },
        }),
      );
    }
    if (c.backlog > 0) {
      await seedBacklog(gh, db.url, c.backlog);
      progress(`${c.name}: ${c.backlog} GitHub writes already waiting in the outbox`);
    }
    progress(`${c.name}: ${c.replicas} replica(s), ${c.workers} workers up; queueing ${c.tasks} issues`);
    const queuedAt = await gh.queue(c.tasks);
    const deadline = queuedAt + c.timeoutMs;
    let restartReadyMs: number | null = null;
    let killedAt = 0;
    let reported = 0;
    const check = () => {
      if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
      for (const w of workers) if (w.exit) throw new Error(`${w.name} exited:\n${w.tail()}`);
      if (Date.now() > deadline)
        throw new Error(`${c.name}: not done after ${c.timeoutMs / 1000} s (${gh.merges.size}/${c.tasks} merged)`);
    };
    while (gh.merges.size < c.tasks) {
      check();
      if (gh.merges.size >= reported + Math.max(1, Math.floor(c.tasks / 4))) {
        reported = gh.merges.size;
        progress(`${c.name}: ${reported}/${c.tasks} merged after ${((Date.now() - queuedAt) / 1000).toFixed(1)} s`);
      }
      if (restartReadyMs === null && c.replicas > 1 && gh.merges.size >= c.tasks / 2) {
        const victim = replicas[replicas.length - 1]!;
        front.targets.splice(front.targets.indexOf(victim.url), 1);
        killedAt = Date.now();
        await victim.kill();
        progress(`${c.name}: SIGKILL ${victim.name} at ${gh.merges.size}/${c.tasks} merged; starting it again`);
        restartReadyMs = await victim.start();
        front.targets.push(victim.url);
      }
      await sleep(100);
    }
    await gh.allMerged(c.tasks);
    progress(`${c.name}: all ${c.tasks} merged; waiting for GitHub's labels to converge`);
    let labelsConvergedAt: number | null = null;
    let drained = 0;
    for (;;) {
      check();
      const stale = [...Array(c.tasks).keys()].some((i) =>
        gh.fake.state.labelsOf(REPO, i + 1).some((l) => l.startsWith("agent:")),
      );
      if (!stale && labelsConvergedAt === null) {
        labelsConvergedAt = Date.now();
        progress(`${c.name}: labels converged; waiting for the outbox to drain`);
      }
      const { counts } = await api<{ counts: Record<string, number> }>(
        front.url,
        adminToken,
        "/api/v1/effects?limit=1",
      );
      const left = (counts["pending"] ?? 0) + (counts["running"] ?? 0);
      if (!stale && left === 0) break;
      if (Date.now() - drained > 15_000) {
        drained = Date.now();
        progress(`${c.name}: ${left} GitHub writes still pending`);
      }
      await sleep(200);
    }
    const convergedAt = Date.now();
    const { runs } = await api<{ runs: { startedAt: string; task: { issue: number } }[] }>(
      front.url,
      adminToken,
      "/api/v1/runs?limit=1000",
    );
    const claims = new Map<number, number>();
    for (const run of runs) {
      const at = Date.parse(run.startedAt);
      const seen = claims.get(run.task.issue);
      if (seen === undefined || at < seen) claims.set(run.task.issue, at);
    }
    const doubles = join(journal, "double");
    return {
      config: {
        name: c.name,
        replicas: c.replicas,
        tasks: c.tasks,
        workers: c.workers,
        backlog: c.backlog,
        agentSeconds: c.agentSeconds,
        timeoutMs: c.timeoutMs,
      },
      queuedAt,
      merges: [...gh.merges.values()],
      claims,
      requests: gh.requests(),
      nodes: nodesOf(gh.fake.state.repo(REPO)),
      labelsConvergedAt: labelsConvergedAt ?? convergedAt,
      convergedAt,
      doubleClaims: existsSync(doubles) ? readFileSync(doubles, "utf8").trim().split("\n") : [],
      restartReadyMs,
      takeover: takeoverAfter(replicas, killedAt),
      violations: [...gh.fake.violations],
    };
  } finally {
    await Promise.allSettled(workers.map((w) => w.stop(5_000)));
    await Promise.allSettled(replicas.map((r) => r.stop()));
    await front.close();
    await gh.close();
    await db.drop();
    removeTempDir(dir);
  }
}

/** The first takeover any replica logged after the kill: how long the killed replica's work waited for it. */
function takeoverAfter(replicas: Replica[], killedAt: number): ScenarioRaw["takeover"] {
  if (killedAt === 0) return null;
  const first = replicas
    .flatMap((r) => r.takeovers)
    .filter((t) => t.at >= killedAt)
    .sort((a, b) => a.at - b.at)[0];
  return first ? { afterKillMs: first.at - killedAt, deliveries: first.deliveries, effects: first.effects } : null;
}

/** The node ids GitHub gave the repository's issues and labels, for reading GraphQL label writes by name. */
function nodesOf(repo: Repo): ScenarioRaw["nodes"] {
  const issues: Record<string, number> = {};
  for (const i of repo.issues.values()) issues[nodeId(i.isPull ? "PR" : "I", i.id)] = i.number;
  const labels: Record<string, string> = {};
  for (const l of repo.labels.values()) labels[nodeId("LA", l.id)] = l.name;
  return { issues, labels };
}
