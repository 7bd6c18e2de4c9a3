// Worker benchmark: what does `orchestra worker` cost per run in git (its
// mirror fetch, the run's worktree, the facts and the push) on a repository
// of 5,000 commits, against what a plain `git clone` + commit + `git push` of
// the same change costs, measured in the same run on the same machine?
//
// The App runs in this process as the tests run it (test/support/lifecycle-
// rig.ts: SQLite, the fake GitHub), with brokered credentials (the default
// config), and the fake serves the repository over smart HTTP through git's
// own http-backend. The worker is the package's CLI as a child process, one
// `--once` per run, each claiming an issue queued for it; runs alternate which
// side goes first. See bench/README.md.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { existsSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { writeFile, chmod } from "node:fs/promises";
import { startFakeGitHub, type FakeGitHub } from "../../test/fake-github/index.js";
import { autoWebhooks } from "../../test/support/github-events.js";
import { INSTALLATION, REPO, startRig, type Rig } from "../../test/support/lifecycle-rig.js";
import { fakeWebhookPayload } from "../../test/support/webhooks.js";
import { root, stamp, UsageError } from "../claims/options.js";
import { runBench } from "../lifecycle.js";
import { makeTempDir } from "../ingest/targets.js";
import { runFacts, writeResults } from "../results.js";
import { buildHistory, type HistoryFacts } from "./history.js";
import { baselineRun, changeLine, workerRun, WorkerRunFailed } from "./measure.js";
import { parseOptions, USAGE, type Options } from "./options.js";
import { progressLine, summarise, table, type RunPair } from "./report.js";

const BIN = join(root, "bin", "orchestra.js");
const CLI_ENTRY = join(root, "dist", "src", "cli", "main.js");
let deadlineAt = Date.now() + 20 * 60_000;
const log = (line: string): void => void process.stderr.write(line + "\n");
const out = (line: string): void => void process.stdout.write(line + "\n");

/** Waits until the App has processed every delivery it holds and performed the effects due. */
async function quiet(rig: Rig): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const pending = await rig.app.database.db.delivery.count({ where: { state: "pending" } });
    if (pending === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await rig.settle();
}

/** An issue labelled for the queue, and GitHub's `issues.labeled` delivered for it; answers its number. */
async function queueIssue(rig: Rig, run: number): Promise<number> {
  const issue = rig.fake.state.addIssue(REPO, {
    title: `Bench run ${run}`,
    body: `Append one line to a file (run ${run}).`,
    labels: ["agent:queued"],
    user: "alice",
  });
  await rig.deliverPayload(
    "issues",
    fakeWebhookPayload(rig.fake, "issues", "labeled", {
      repo: REPO,
      issue: issue.number,
      label: "agent:queued",
      sender: "alice",
    }),
  );
  return issue.number;
}

async function setUp(o: Options): Promise<{ fake: FakeGitHub; rig: Rig; history: HistoryFacts }> {
  const fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION, private: true, git: { files: { "README.md": "# app\n" } } });
  fake.state.setPermission(REPO, "alice", "write");
  log(
    `building ${REPO}: ${o.commits} commits, ${o.files} files of about ${o.fileKb} KB, ${o.touch} changed per commit`,
  );
  const history = await buildHistory(fake, REPO, o);
  log(
    `  ${history.commits} commits, tree ${(history.treeBytes / 1048576).toFixed(1)} MB, pack ` +
      `${(history.packBytes / 1048576).toFixed(1)} MB, built in ${history.buildS.toFixed(1)} s`,
  );
  const rig = await startRig({ fake });
  fake.setWebhookTarget(rig.app.url + "/api/github/webhooks", rig.app.secret);
  autoWebhooks(fake);
  return { fake, rig, history };
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError) && !(e instanceof TypeError)) throw e;
    process.stderr.write(`bench:worker: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  if (!existsSync(CLI_ENTRY)) {
    process.stderr.write(`bench:worker: ${CLI_ENTRY} is missing; run npm run build (npm run bench:worker does)\n`);
    return 2;
  }
  const startedAt = Date.now();
  deadlineAt = startedAt + o.maxMinutes * 60_000;
  const load = os.loadavg();
  log(
    `bench:worker  ${os.cpus().length} CPUs, load average ${load.map((l) => l.toFixed(2)).join(" ")}` +
      `${load[0]! > os.cpus().length / 2 ? "  (busy machine: expect noise)" : ""}`,
  );
  const { fake, rig, history } = await setUp(o);
  const dir = makeTempDir("orchestra-bench-worker-");
  const workdir = join(dir, "work");
  const home = join(dir, "home");
  mkdirSync(home, { recursive: true });
  const agentScript = join(dir, "agent.sh");
  // The stand-in agent: the same one-file change the baseline makes, committed.
  await writeFile(
    agentScript,
    ["#!/bin/sh", "set -e", 'printf "%s\\n" "$2" >> "$1"', 'git add "$1"', 'git commit -q -m "Bench change"', ""].join(
      "\n",
    ),
  );
  await chmod(agentScript, 0o755);
  const worker = await rig.worker("bench-worker");
  const url = `${fake.url}/${REPO}.git`;
  // Time the fake spends on a push after git's receive-pack (reading it into its model, the push webhook to the
  // App): real git-backed hosting has a cost there too, but this one is the fake's, and both sides pay it.
  let fakePushMs = 0;
  const received = fake.state.git.received.bind(fake.state.git);
  fake.state.git.received = async (...args) => {
    const t0 = performance.now();
    try {
      return await received(...args);
    } finally {
      fakePushMs += performance.now() - t0;
    }
  };
  const fakeSince = (since: number) => fakePushMs - since;
  // This process's CPU (the App and the fake GitHub) while one side runs: it shares the machine's CPUs with git.
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const d = process.cpuUsage(since);
    return (d.user + d.system) / 1000;
  };
  const pairs: RunPair[] = [];
  let failed: string | null = null;
  try {
    for (let run = 1; run <= o.runs; run++) {
      const path = history.paths[(run - 1) % history.paths.length]!;
      const first = run % 2 === 1 ? "worker" : "baseline";
      const doBaseline = async () => {
        const token = fake.state.issueToken(INSTALLATION).token;
        const before = fakePushMs;
        const cpu = process.cpuUsage();
        const b = await baselineRun({ home, url, token, run, path });
        const rigCpuMs = cpuMs(cpu);
        const fakeMs = fakeSince(before);
        await quiet(rig);
        return { ...b, fakePushMs: fakeMs, rigCpuMs };
      };
      const doWorker = async () => {
        await queueIssue(rig, run);
        const before = fakePushMs;
        const cpu = process.cpuUsage();
        const w = await workerRun({
          bin: BIN,
          url: rig.app.url,
          workdir,
          cwd: dir,
          token: worker.token,
          agent: `sh ${agentScript} ${path} '${changeLine(run)}'`,
        });
        const rigCpuMs = cpuMs(cpu);
        const fakeMs = fakeSince(before);
        await quiet(rig);
        return { ...w, fakePushMs: fakeMs, rigCpuMs };
      };
      let pair: RunPair;
      if (first === "worker") {
        const w = await doWorker();
        pair = { run, first, worker: w, baseline: await doBaseline() };
      } else {
        const b = await doBaseline();
        pair = { run, first, baseline: b, worker: await doWorker() };
      }
      if (pair.worker.outcome !== "review")
        throw new WorkerRunFailed(`run ${run}: the exit was answered ${pair.worker.outcome}, not review`);
      pairs.push(pair);
      log(progressLine(pair, o.runs));
    }
  } catch (e) {
    if (!(e instanceof WorkerRunFailed) && !/^baseline /.test((e as Error).message)) throw e;
    failed = (e as Error).message;
    log(`FAILED: ${failed}`);
  } finally {
    await rig.stop();
    await fake.close();
  }
  if (pairs.length < 2) {
    log("bench:worker: fewer than two runs finished, nothing to report");
    return 1;
  }
  const summary = summarise(pairs, o.target);
  out("");
  out(table(summary, pairs.length));
  const file = writeResults(join(root, "bench/results", `worker-${stamp}.json`), {
    ...runFacts({ root, startedAt, loadAtStart: load }),
    options: o,
    history,
    summary,
    runs: pairs,
    failed,
    fakeViolations: fake.violations.slice(0, 20),
  });
  out(`\nresults: ${relative(process.cwd(), file)}`);
  if (failed) return 1;
  return o.strict && !summary.met ? 1 : 0;
}

runBench("worker", main, { deadlineAt: () => deadlineAt, dropDatabases: async () => undefined });
