/**
 * The operator CLI: the program definition. Commands that change the
 * database itself (migrate, prune) open it directly; the others talk to a
 * running service over its API, so they work the same against one replica
 * or many. Output helpers and the API client are in io.ts; each verb group's
 * rendering is in its own file.
 */
import { existsSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { RUN_STATES, TASK_STATES } from "../machine/model.js";
import { FAILURE_CLASSES } from "../outcomes/classify.js";
import { SWEEP_KINDS } from "../reconcile/reports.js";
import { EXIT, api, die, json, out, post, query } from "./io.js";
import { classifyCommand, readAll } from "./classify.js";
import { pruneCommand } from "./prune.js";
import { deliveriesText, type DeliveriesAnswer } from "./deliveries.js";
import { effectsText, ignoredText, type EffectsAnswer, type IgnoredAnswer } from "./effects.js";
import { workersCommandOf } from "./workers.js";
import { migrateCommand } from "./migrate.js";
import { workerCommand } from "./worker.js";
import { taskText, tasksText, type TaskAnswer, type TaskRow } from "./tasks.js";
import { runsText, type RunsAnswer } from "./runs.js";
import { STATUS_CALLS, statusText, type StatusAnswer } from "./status.js";
import {
  branchesText,
  pauseText,
  sweepsText,
  type BranchesAnswer,
  type PauseAnswer,
  type SweepsAnswer,
} from "./fleet.js";

const FOOTER = `
API commands read ORCHESTRA_URL (default http://localhost:$PORT or :3000) and ORCHESTRA_ADMIN_TOKEN.
Every command that prints data takes --json: the API's answer, for scripts.

exit codes:
  0  done
  1  the service or the database failed: what happened and what to do is on stderr
  2  usage error (unknown command or option, missing argument, bad setting): the usage line is on stderr`;

/** Prints the API's answer as JSON, or the human rendering of it. */
const show =
  <T>(flags: { json?: boolean }, render: (body: T) => string) =>
  (body: unknown) =>
    out(flags.json ? json(body) : render(body as T));

function positiveInt(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number of days, 1 or more");
  return n;
}

function limitOf(text: string): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 1000)) throw new InvalidArgumentError("expected a whole number from 1 to 1000");
  return n;
}

function program(): Command {
  const cli = new Command("orchestra")
    .description("Operate Orchestra: the queue, tasks, workers, deliveries, GitHub writes and the database.")
    .configureOutput({ outputError: (text, write) => write(`orchestra: ${text.replace(/^error: /, "")}`) })
    // Usage errors exit 2 (commander's own default is 1, which here means "the service failed").
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage))
    .addHelpText("after", FOOTER);

  cli
    .command("status")
    .description(
      "one screen: queue by repository and why tasks wait, live leases, blocked, failed, " +
        "parked and retrying work, failing reconcile scopes, GitHub calls this hour and rate limit",
    )
    .option("--json", "the API answers, keyed by what they are")
    .action(async (o: { json?: boolean }) => {
      const keys = Object.keys(STATUS_CALLS) as Array<keyof StatusAnswer>;
      const answers = await Promise.all(keys.map((k) => api(STATUS_CALLS[k])));
      const s = Object.fromEntries(keys.map((k, i) => [k, answers[i]])) as Record<keyof StatusAnswer, unknown>;
      const status = {
        ...s,
        queued: (s.queued as { tasks: TaskRow[] }).tasks,
        claimed: (s.claimed as { tasks: TaskRow[] }).tasks,
        blocked: (s.blocked as { tasks: TaskRow[] }).tasks,
        failed: (s.failed as { tasks: TaskRow[] }).tasks,
      } as StatusAnswer;
      out(o.json ? json(status) : statusText(status));
    });

  cli
    .command("tasks")
    .description("tasks, in claim order: id, issue, state, attempt, PR, why a queued one waits")
    .option("--repo <owner/repo>", "only this repository")
    .addOption(new Option("--state <state>", "only tasks in this state").choices(TASK_STATES))
    .option("--json", "the API's answer")
    .action(async (o: { repo?: string; state?: string; json?: boolean }) =>
      show<{ tasks: TaskRow[] }>(o, (b) => tasksText(b.tasks))(
        await api(`/api/v1/tasks${query({ repo: o.repo, state: o.state })}`),
      ),
    );

  cli
    .command("task")
    .description("one task: its lease, runs with class, recovery and evidence, decisions, GitHub writes, cost")
    .argument("<id>", "the task id (see orchestra tasks)")
    .option("--json", "the API's answer")
    .action(async (id: string, o: { json?: boolean }) =>
      show<TaskAnswer>(o, taskText)(await api(`/api/v1/tasks/${encodeURIComponent(id)}`)),
    );

  cli
    .command("runs")
    .description("runs across tasks, newest first: task, worker, how each ended, class, recovery, evidence")
    .option("--repo <owner/repo>", "only this repository's")
    .addOption(new Option("--class <class>", "only runs of this failure class").choices(FAILURE_CLASSES))
    .addOption(new Option("--state <state>", "only runs in this state").choices(RUN_STATES))
    .option("--task <id>", "only this task's (see orchestra tasks)")
    .option("--limit <n>", "at most this many (default 50, at most 1000)", limitOf)
    .option("--json", "the API's answer")
    .action(
      async (o: { repo?: string; class?: string; state?: string; task?: string; limit?: number; json?: boolean }) =>
        show<RunsAnswer>(o, (b) => runsText(b))(
          await api(
            `/api/v1/runs` +
              `${query({ repo: o.repo, class: o.class, state: o.state, task: o.task, limit: o.limit?.toString() })}`,
          ),
        ),
    );

  const byWhom = process.env["USER"] || undefined;
  cli
    .command("pause")
    .description(
      "pause a repository, or the whole service without one: nothing new is claimed or dispatched; reconcile goes on",
    )
    .argument("[repo]", "owner/repo")
    .option("--reason <text>", "why, shown to whoever looks at the queue")
    .option("--json", "the API's answer")
    .action(async (repo: string | undefined, o: { reason?: string; json?: boolean }) =>
      show<PauseAnswer>(
        o,
        pauseText,
      )(await api("/api/v1/pause", post({ repo, paused: true, reason: o.reason, by: byWhom }))),
    );
  cli
    .command("unpause")
    .description("resume a paused repository, or the whole service without one")
    .argument("[repo]", "owner/repo")
    .option("--json", "the API's answer")
    .action(async (repo: string | undefined, o: { json?: boolean }) =>
      show<PauseAnswer>(o, pauseText)(await api("/api/v1/pause", post({ repo, paused: false }))),
    );

  const actions: Record<string, string> = {
    retry: "re-queue a failed or blocked task with a fresh attempt budget",
    resume: "continue a blocked or failed task on its branch",
    hold: "stop queued, running or in-review work (blocked until retry or resume)",
    cancel: "cancel a task (its history is kept)",
  };
  for (const [action, what] of Object.entries(actions)) {
    cli
      .command(action)
      .description(`${what}, as the comment command does`)
      .argument("<task>", "the task id (see orchestra tasks)")
      .option("--json", "the API's answer")
      .action(async (id: string, o: { json?: boolean }) =>
        show<{ task: { id: string; state: string; attempt: number }; outcome: string }>(
          o,
          (a) =>
            `${a.task.id}  ${action}: ` +
            `${a.outcome === "applied" ? `now ${a.task.state}` : `nothing to do (${a.task.state})`}\n`,
        )(await api(`/api/v1/tasks/${encodeURIComponent(id)}/${action}`, post({ by: byWhom }))),
      );
  }

  cli
    .command("sweeps")
    .description("failing reconcile scopes, and what each reconcile and deliveries sweep did, newest first")
    .addOption(new Option("--kind <kind>", "only reports of this kind").choices(SWEEP_KINDS))
    .option("--json", "the API's answer")
    .action(async (o: { kind?: string; json?: boolean }) =>
      show<SweepsAnswer>(o, sweepsText)(await api(`/api/v1/sweeps${query({ kind: o.kind })}`)),
    );

  cli
    .command("branches")
    .description("a repository's agent branches and which are stale (listed, never deleted)")
    .argument("<owner/repo>")
    .option("--stale-days <n>", "stale after this many days without a commit (default 14)", positiveInt)
    .option("--json", "the API's answer")
    .action(async (repo: string, o: { staleDays?: number; json?: boolean }) =>
      show<BranchesAnswer>(
        o,
        branchesText,
      )(await api(`/api/v1/branches${query({ repo, staleDays: o.staleDays?.toString() })}`)),
    );

  cli
    .command("deliveries")
    .description(
      "received webhook deliveries: how many in each state, " +
        "and the latest ones (pending, retrying, processing, done, ignored, parked)",
    )
    .option("--state <state>", "only deliveries in this state")
    .option("--json", "the API's answer")
    .action(async (o: { state?: string; json?: boolean }) =>
      show<DeliveriesAnswer>(o, deliveriesText)(await api(`/api/v1/deliveries${query({ state: o.state })}`)),
    );

  cli
    .command("replay")
    .description("put a parked delivery back in the queue")
    .argument("[delivery-id]")
    .action(async (id: string | undefined) => {
      if (!id)
        die(
          EXIT.usage,
          "replay needs a delivery id; list parked ones with: " +
            "orchestra deliveries --state parked\nusage: orchestra replay <delivery-id>",
        );
      await api(`/api/v1/deliveries/${encodeURIComponent(id)}/replay`, { method: "POST" });
      out(`${id} queued again\n`);
    });

  const effects = cli
    .command("effects")
    .description(
      "GitHub writes Orchestra recorded: pending, running, done, dropped, " +
        "dry-run (would have done) or parked (gave up; see its errors)",
    )
    .option("--state <state>", "only effects in this state")
    .option("--task <id>", "only this task's")
    .option("--json", "the API's answer")
    .action(async (o: { state?: string; task?: string; json?: boolean }) =>
      show<EffectsAnswer>(o, effectsText)(await api(`/api/v1/effects${query({ state: o.state, task: o.task })}`)),
    );
  effects
    .command("replay")
    .description("put a parked effect back in the queue once its cause is fixed")
    .argument("[effect-id]")
    .action(async (id: string | undefined) => {
      if (!id)
        die(
          EXIT.usage,
          "effects replay needs an effect id; list parked ones with: " +
            "orchestra effects --state parked\nusage: orchestra effects replay <effect-id>",
        );
      await api(`/api/v1/effects/${encodeURIComponent(id)}/replay`, { method: "POST" });
      out(`${id} queued again\n`);
    });

  cli
    .command("ignored")
    .description("counts of input Orchestra ignored (untrusted labels, commands, comments, …)")
    .option("--json", "the API's answer")
    .action(async (o: { json?: boolean }) => show<IgnoredAnswer>(o, ignoredText)(await api("/api/v1/ignored")));

  workersCommandOf(cli);
  workerCommand(cli);

  cli
    .command("doctor")
    .description(
      "check from here, with the service's environment, what Orchestra needs: settings, " +
        "database and migrations, GitHub and the App's credentials, the App's and each installation's " +
        "permissions and events against app.yml, failed webhook deliveries; exit 1 when a check fails",
    )
    .option("--json", "{checks: [{name, status, detail, fix?}]}")
    .action(async (o: { json?: boolean }) => {
      // Loaded here: it brings Probot's octokit, which the other commands do not need.
      const { doctorCommand } = await import("./doctor/index.js");
      process.exitCode = await doctorCommand({ json: o.json === true }, { env: process.env, out });
    });

  cli
    .command("migrate")
    .description("apply pending database migrations (DATABASE_URL; default ./data/orchestra.db)")
    .action(migrateCommand);

  cli
    .command("prune")
    .description("delete old rows now, as retention would (ORCHESTRA_RETENTION_*, DATABASE_URL); progress on stderr")
    .option("--dry-run", "count them, delete nothing")
    .option("--json", "the counts as JSON")
    .action(async (o: { dryRun?: boolean; json?: boolean }) => {
      process.exitCode = await pruneCommand(
        { dryRun: o.dryRun === true, json: o.json === true },
        { env: process.env, out, err: (t) => process.stderr.write(t) },
      );
    });

  cli
    .command("classify")
    .description(
      "what Orchestra would do with a run: reads the facts document (JSON) " +
        "on stdin, prints {class, recovery, evidence}",
    )
    .usage("[--batch] < facts.json")
    .option("--batch", "an array of documents in, an array of answers out")
    .action(async (o: { batch?: boolean }) => {
      // Waiting on a terminal would look like a hang; say what it expects instead.
      if (process.stdin.isTTY)
        die(EXIT.usage, "classify reads a facts document (JSON) on stdin, e.g. orchestra classify < facts.json");
      const answer = classifyCommand(await readAll(process.stdin), { batch: o.batch === true });
      out(answer.stdout);
      process.stderr.write(answer.stderr);
      // exitCode, not exit(): exit() can cut off a large answer still draining into a pipe.
      process.exitCode = answer.code;
    });

  // A usage error prints the usage line of the command it is about.
  const usageLines = (cmd: Command, path: string) => {
    cmd.showHelpAfterError(
      cmd === cli
        ? "usage: orchestra <command> [options]; orchestra --help lists the commands"
        : `usage: ${path} ${cmd.usage()}`,
    );
    for (const sub of cmd.commands) usageLines(sub, `${path} ${sub.name()}`);
  };
  usageLines(cli, "orchestra");
  return cli;
}

const argv = process.argv.slice(2);
if (existsSync(".env")) process.loadEnvFile(".env");
const cli = program();
if (argv.length === 0) cli.outputHelp();
else
  await cli
    .parseAsync(argv, { from: "user" })
    .catch((err: unknown) => die(EXIT.failed, `failed: ${err instanceof Error ? err.message : String(err)}`));
