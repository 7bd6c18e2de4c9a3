/**
 * `orchestra worker`: the settings read at the edge (options, environment,
 * orchestra-worker.yml), then the worker loop (src/runner/).
 */
import { existsSync, readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { CONFIG_FILE, DEFAULTS, workerSettings, type WorkerFlags } from "../runner/config.js";
import { runDispatched } from "../runner/dispatched.js";
import { runWorker, WORKER_EXIT } from "../runner/worker.js";

export const WORKER_HELP = `
The agent runs as \`sh -c "<agent>"\` in the run's worktree, with the task in .orchestra/task.md and
ORCHESTRA_TASK_FILE, ORCHESTRA_RUN_ID, ORCHESTRA_REPO, ORCHESTRA_ISSUE, ORCHESTRA_BRANCH, ORCHESTRA_CONTINUATION,
ORCHESTRA_DECISIONS_DIR, ORCHESTRA_QUESTION_FILE and ORCHESTRA_USAGE_FILE; it gets no GitHub token (the worker pushes).

settings: options win over the environment (ORCHESTRA_URL, ORCHESTRA_WORKER_TOKEN, ORCHESTRA_WORKDIR,
ORCHESTRA_AGENT, ORCHESTRA_GIT_TOKEN), which wins over ${CONFIG_FILE} (--config; the options' names in camelCase).

exit codes:
  0  --once: the run was reported (review or classified) or asked a question; without --once: stopped cleanly
  1  the service or git failed in a way the worker cannot go on from: what happened and what to do is on stderr
  2  usage error, a bad setting, or the workdir is another worker's
  3  --once: nothing to claim
  4  --once: the run was released before the agent started (preflight, clone, worktree)
  5  --once: the lease was lost (superseded, stalled, revoked): the exit was not accepted
  130, 143  stopped by SIGINT or SIGTERM, after handing the running work off
--dispatched (the job's conclusion is the run's exit): 0 the agent finished and its work is pushed, or it changed
  nothing; 1 it failed, was stopped (work pushed as a handoff) or the push failed; 2 not a dispatch from Orchestra;
  4 preflight failed before the agent started

Reference: docs/worker.md`;

export function workerCommand(cli: Command): void {
  cli
    .command("worker")
    .description("run a coding agent on Orchestra's tasks: claim, worktree, agent, push, pull request, exit")
    .option("--config <file>", `settings file (default ./${CONFIG_FILE} when it exists)`)
    .option("--url <url>", `the service (ORCHESTRA_URL; default ${DEFAULTS.url})`)
    .option("--token-file <file>", "a file holding the worker token (else ORCHESTRA_WORKER_TOKEN)")
    .option("--workdir <dir>", `mirrors, worktrees and logs (default ${DEFAULTS.workdir})`)
    .option("--concurrency <n>", `runs at once (default ${DEFAULTS.concurrency})`)
    .option("--agent <command>", "the agent, a shell command run in the worktree")
    .option("--test <command>", "a test command the worker runs after the agent: sets testsPassed")
    .option("--max-run-minutes <n>", `wall-clock cap per run (default ${DEFAULTS.maxRunMinutes})`)
    .option(
      "--idle-minutes <n>",
      `stop an agent with no output and no worktree change (default ${DEFAULTS.idleMinutes})`,
    )
    .option("--grace-seconds <n>", `between SIGTERM and SIGKILL (default ${DEFAULTS.graceSeconds})`)
    .option("--poll-seconds <n>", `between claims while nothing is claimable (default ${DEFAULTS.pollSeconds})`)
    .option("--once", "one claim, then exit (CI runners): the exit code says how it went")
    .option(
      "--dispatched",
      "inside a GitHub Actions job Orchestra dispatched: the run from the job's inputs, no service (implies --once)",
    )
    .option("--json", "one JSON object per line for each event")
    .option("--verbose", "heartbeats and retries too")
    .option("--github-url <url>", `clone URLs for servers that send none (default ${DEFAULTS.githubUrl})`)
    .option("--github-api-url <url>", `the REST API for servers that send none (default ${DEFAULTS.githubApiUrl})`)
    .addOption(
      new Option(
        "--git-token-file <file>",
        "the worker's own GitHub token for repositories with credentials: none (else ORCHESTRA_GIT_TOKEN)",
      ),
    )
    .addHelpText("after", WORKER_HELP)
    .action(async (flags: WorkerFlags) => {
      const path = flags.config ?? (existsSync(CONFIG_FILE) ? CONFIG_FILE : null);
      let file: { path: string; text: string } | null = null;
      if (path) {
        try {
          file = { path, text: readFileSync(path, "utf8") };
        } catch (err) {
          process.stderr.write(`orchestra: cannot read ${path}: ${(err as Error).message}\n`);
          process.exit(WORKER_EXIT.usage);
        }
      }
      const parsed = workerSettings(flags, process.env, file, (p) => readFileSync(p, "utf8"));
      if (!parsed.ok) {
        process.stderr.write(
          `orchestra: worker: ${parsed.error}\nusage: orchestra worker --agent "<command>" [options]\n`,
        );
        process.exit(WORKER_EXIT.usage);
      }
      const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t) };
      process.exitCode = parsed.settings.dispatched
        ? await runDispatched(parsed.settings, io)
        : await runWorker(parsed.settings, io);
    });
}
