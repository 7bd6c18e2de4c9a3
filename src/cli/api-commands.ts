/**
 * The commands that talk to a running service over its API: reading the queue, tasks, runs, sweeps, branches,
 * deliveries, effects and ignored input, and the operator's actions (pause, retry, resume, hold, cancel, replay).
 * Each prints the API's answer with --json, or its rendering from the verb group's own file.
 */
import { InvalidArgumentError, Option, type Command } from "commander";
import { RUN_STATES, TASK_STATES } from "../machine/model.js";
import { FAILURE_CLASSES } from "../outcomes/classify.js";
import { SWEEP_KINDS } from "../reconcile/reports.js";
import { EXIT, api, die, json, out, post, query } from "./io.js";
import { deliveriesText, type DeliveriesAnswer } from "./deliveries.js";
import { effectsText, ignoredText, type EffectsAnswer, type IgnoredAnswer } from "./effects.js";
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

export function apiCommands(cli: Command): void {
  cli
    .command("status")
    .description(
      "one screen: queue by repository and why tasks wait, live leases, blocked, failed, " +
        "parked and retrying work, failing reconcile scopes, GitHub calls this hour and rate limit, replicas",
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
}
