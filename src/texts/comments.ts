/**
 * Every comment Orchestra writes on GitHub, in one place. Each says what
 * happened and what a person can do about it. Bodies stay under GitHub's
 * comment limit: a long one is cut with a note (withMarker, texts/limits.ts)
 * rather than refused by GitHub forever.
 */
import type { Labels } from "../machine/model.js";
import { fitted, GITHUB_COMMENT_LIMIT } from "./limits.js";
import { textOf } from "./value.js";

/** The reply to untrusted label changes goes once per person, issue and UTC day; it says so. */
const ONCE_A_DAY = " Further label changes of yours on this issue today are undone without another reply.";

const quote = (text: string) => `> ${text.split("\n").join("\n> ")}`;

export const texts = {
  untrustedQueue(actor: string, labels: Labels, minPermission: string, why: string): string {
    return (
      `@${actor} the \`${labels.queued}\` label was removed: only people with ${minPermission} ` +
      `permission or higher on this repository (or listed in \`trust.users\` in \`.github/orchestra.yml\`) ` +
      `can queue work for agents (${why}). Ask a maintainer to add the label.${ONCE_A_DAY}`
    );
  },

  /** An untrusted change to one of Orchestra's labels, undone. */
  untrustedLabel(
    actor: string,
    label: string,
    change: "added" | "removed",
    minPermission: string,
    why: string,
  ): string {
    const undone = change === "removed" ? `was put back` : `was removed again`;
    return (
      `@${actor} the \`${label}\` label ${undone}: Orchestra's labels show what it is doing with this issue, ` +
      `and only people with ${minPermission} permission or higher on this repository (or listed ` +
      `in \`trust.users\` in \`.github/orchestra.yml\`) can change them (${why}). ` +
      `To have the task changed, ask a maintainer (\`orchestra help\` lists the commands).${ONCE_A_DAY}`
    );
  },

  badConfig(problems: string[]): string {
    return (
      `Orchestra is paused for this repository: \`.github/orchestra.yml\` is invalid.\n\n` +
      `${problems.map((p) => `- ${p}`).join("\n")}\n\n` +
      `Fix the file on the default branch; the next label change is handled with the corrected configuration.`
    );
  },

  attemptsSpent(attempts: number, lines: string[], labels: Labels): string {
    return (
      `Agents made ${attempts} attempts at this issue without producing a pull request, ` +
      `so it is marked \`${labels.failed}\`.\n\n${lines.join("\n")}\n\n` +
      "To try again with a fresh attempt budget, comment `orchestra retry`; " +
      "`orchestra resume` continues on the branch instead (`orchestra help` lists the commands)."
    );
  },

  prClosed(prNumber: number): string {
    return (
      `Pull request #${prNumber} was closed without merging, so this task is now blocked. ` +
      "To have an agent try again, comment `orchestra retry` (from the default branch) or `orchestra resume` " +
      "(on this task's branch)."
    );
  },

  driftRestored(found: string[], want: string | null, state: string): string {
    return (
      `The agent labels on this issue were changed by hand ` +
      `(${found.length ? found.map((l) => `\`${l}\``).join(", ") : "none"}); ` +
      `Orchestra put back ${want ? `\`${want}\`` : "no label"}, because the task is ${state}. ` +
      `The labels show what Orchestra is doing, so they follow the task: ` +
      `to change the task, comment \`orchestra hold\`, \`orchestra retry\`, \`orchestra resume\` ` +
      `or \`orchestra cancel\` (\`orchestra help\` lists them).`
    );
  },

  superseded(subIssues: string[]): string {
    return (
      `Every sub-issue of this issue is closed (${subIssues.join(", ")}), so the agents' ` +
      `failure here no longer stands in the way: Orchestra removed its label and considers ` +
      `the task done. If the sub-issues cover everything this issue asked for, close it.`
    );
  },

  breakerOpened(repo: string, klass: string, runs: string[], until: Date): string {
    return (
      `Orchestra stopped claiming work in ${repo}: ${runs.length} runs in a row ended \`${klass}\`, ` +
      `which usually means something outside the agents is broken (a provider outage, a broken runner, ` +
      `a bad base branch).\n\nRuns: ${runs.map((r) => `\`${r}\``).join(", ")}\n\n` +
      `Claims resume at ${until.toISOString()} with one probe run; ` +
      `if it ends \`${klass}\` again the pause starts over, otherwise claiming goes back to normal. ` +
      `Queued tasks show \`waitingFor: breaker\` in the operator API meanwhile. ` +
      `Runs that died of infrastructure failures did not use up their tasks' attempts.`
    );
  },

  dispatchRefused(message: string, workflow: string, ref: string): string {
    return (
      `Orchestra could not start an agent for this issue: ${message}.\n\n` +
      `The task stays queued and no attempt was counted; Orchestra retries with a growing delay. ` +
      `Check that \`.github/workflows/${workflow.replace(/^\.github\/workflows\//, "")}\` exists on \`${ref}\`, ` +
      `has a \`workflow_dispatch\` trigger accepting the inputs task, run, attempt, lease_epoch, branch and ` +
      `continuation, and that the App may run Actions in this repository.`
    );
  },

  /** GitHub refuses every dispatch in the repository: its breaker opened, one comment for all its tasks. */
  dispatchBreaker(repo: string, message: string, workflow: string, ref: string, until: Date): string {
    return (
      `Orchestra stopped dispatching agents in ${repo}: ${message}.\n\n` +
      `That refusal is about the repository, not this issue, so every queued task there waits ` +
      `(\`waitingFor: breaker\` in the operator API) and none is charged an attempt or commented on. ` +
      `Check that \`.github/workflows/${workflow.replace(/^\.github\/workflows\//, "")}\` exists on \`${ref}\` ` +
      `with a \`workflow_dispatch\` trigger, that Actions are enabled in the repository, and that the App ` +
      `may run them (\`actions: write\`). At ${until.toISOString()} one task is dispatched as a probe: ` +
      `once GitHub accepts it, dispatching goes on; while it refuses, the wait doubles (at most 8×).`
    );
  },

  /** A run's recovery could not finish: the task is blocked, with what failed and the command that resumes it. */
  recoveryStuck(stage: "facts" | "publish", runId: string, branch: string, why: string, labels: Labels): string {
    const what =
      stage === "publish"
        ? `Run ${runId} committed work on \`${branch}\` that Orchestra was to open as a pull request, ` +
          `but GitHub kept refusing it`
        : `Run ${runId} ended without a pull request, and Orchestra could not read what it left on GitHub ` +
          `to classify it (the branch \`${branch}\`, its base, its checks)`;
    return (
      `${what}: ${why}.\n\nSo the task is \`${labels.blocked}\` instead of waiting on it forever, and it no ` +
      `longer holds one of the repository's concurrent slots. Nothing was deleted: the branch is kept. ` +
      "Once the cause is fixed (a missing base branch, the App's permissions), comment `orchestra resume` to " +
      "let an agent continue on the branch, or `orchestra retry` to start over."
    );
  },

  question(attempt: number, question: string, labels: Labels): string {
    return (
      `The agent working on this issue (attempt ${attempt}) has a question and stopped:\n\n${quote(question)}\n\n` +
      `The task is \`${labels.blocked}\` until then. Answer in a comment: a trusted person's answer resumes the ` +
      "task on its branch, with the answer handed to the agent."
    );
  },

  questionExpired(question: string, labels: Labels): string {
    return (
      `Nobody answered this question from the agent within 7 days, so it expired:\n\n${quote(question)}\n\n` +
      `The task stays \`${labels.blocked}\`. ` +
      "To let an agent continue, put what it needs to know in a comment and then comment `orchestra resume`; " +
      "or close the issue."
    );
  },

  blockedHalfDone(attempts: number, branch: string, why: string, labels: Labels): string {
    return (
      `Agents made ${attempts} attempts at this issue. The branch \`${branch}\` has unfinished work (${why}), ` +
      `so it is kept and the task is \`${labels.blocked}\`. Finish it by hand, or comment \`orchestra resume\` ` +
      "to let an agent resume it with a fresh attempt budget."
    );
  },

  escalation(runId: string, attempt: number, klass: string, evidence: Record<string, unknown>): string {
    const calls = Array.isArray(evidence["lastToolCalls"]) ? (evidence["lastToolCalls"] as string[]) : [];
    return [
      `Orchestra needs a human for this issue. Run ${runId} (attempt ${attempt}) ` +
        `ended as **${klass}**: ${textOf(evidence["why"] ?? "")}.`,
      ...(calls.length ? ["", `Last tool calls: ${calls.map((c) => `\`${c}\``).join(" → ")}`] : []),
      "",
      "<details><summary>Evidence</summary>",
      "",
      "```json",
      JSON.stringify(evidence, null, 2),
      "```",
      "</details>",
      "",
      "What you can do: fix what stopped the agent (or answer it in a comment), then comment `orchestra retry` " +
        `to queue the issue again (\`orchestra resume\` to continue on its branch); or close the issue.`,
    ].join("\n");
  },

  budgetSpent(spentUsd: number, budgetUsd: number, runs: number, labels: Labels): string {
    return (
      `This task has used $${spentUsd.toFixed(2)} of model spend over ${runs} run(s), reaching its budget ` +
      `of $${budgetUsd.toFixed(2)} (\`limits.maxCostUsd\`), so Orchestra stopped re-queueing it and marked ` +
      `it \`${labels.blocked}\`. Look at the runs in Orchestra's task view; to continue anyway, ` +
      "raise the budget in `.github/orchestra.yml` and comment `orchestra resume`."
    );
  },

  /** The body of a pull request Orchestra opens for a run that committed its work but opened none. */
  publishedPull(issue: number, runId: string, attempt: number, headSha: string | null): string {
    return (
      `Closes #${issue}\n\nOpened by Orchestra from run ${runId} (attempt ${attempt}): ` +
      `the agent committed this work and exited without opening a pull request. ` +
      `Its head checks were green${headSha ? ` at ${headSha.slice(0, 12)}` : ""}, ` +
      `and were checked again right before this pull request was opened.`
    );
  },

  /** A trusted comment recorded while no agent works on the task: what will act on it. */
  correctionRecorded(state: "queued" | "blocked" | "failed", labels: Labels): string {
    const gets = "and that run gets this comment with its instructions.";
    switch (state) {
      case "queued":
        return (
          `Recorded for the agent: this task is \`${labels.queued}\`, ` +
          `and the run that picks it up gets this comment with its instructions.`
        );
      case "blocked":
        return (
          `Recorded, but no agent is working on this task: it is \`${labels.blocked}\`. ` +
          `\`orchestra resume\` continues it on its branch (\`orchestra retry\` starts it over with a fresh ` +
          `attempt budget), ${gets}`
        );
      case "failed":
        return (
          `Recorded, but no agent is working on this task: it is \`${labels.failed}\`. ` +
          `\`orchestra retry\` queues it again with a fresh attempt budget, ${gets}`
        );
    }
  },

  commandRefused(command: string, why: string, instead: string): string {
    return `\`orchestra ${command}\` was not applied: ${why}. ${instead}`;
  },

  status(lines: string[]): string {
    return ["Orchestra status for this issue:", "", ...lines.map((l) => `- ${l}`)].join("\n");
  },
};

/** The hidden marker that lets a comment whose answer was lost be found instead of posted twice. */
export function commentMarker(key: string): string {
  return `<!-- orchestra:effect ${key} -->`;
}

/**
 * The body as posted: cut to fit GitHub's limit together with the marker,
 * the note naming `fullTextAt` (where the operator finds the whole text).
 */
export function withMarker(body: string, key: string, fullTextAt: string): string {
  const marker = `\n\n${commentMarker(key)}`;
  return fitted(body, GITHUB_COMMENT_LIMIT - marker.length, fullTextAt) + marker;
}
