/**
 * Effects: the GitHub writes a transition causes. The machine only names
 * them; they are stored with the transition (the outbox) and performed later
 * by the executor. Each has a key that makes one logical effect one row,
 * however often the event behind it is delivered.
 */

export interface EffectPayloads {
  /** Make `label` the issue's one agent:* label (null: none), removing `others` that GitHub shows. */
  label: { issue: number; label: string | null; others: string[] };
  "remove-label": { issue: number; label: string };
  /** Posted once; the body carries a hidden marker with the effect's key. */
  comment: { issue: number; body: string };
  reaction: { commentId: number; content: "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes" };
  /** Guarded: deleted only while it has no commits ahead and no open or merged PR. Dropped once a newer run started. */
  "delete-branch": { branch: string; attempt: number };
  /**
   * The task branch of a merged pull request. Guarded: left alone when the
   * repository deletes merged branches itself, and kept when the branch has
   * moved past the merged head (commits no pull request has).
   */
  "delete-merged-branch": { branch: string; pr: number; headSha: string };
  /** Guarded: head checks re-verified green right before opening. Answers pr-published / publish-refused. */
  "create-pull": { branch: string; title: string; body: string; issue: number };
  /** Guarded: skipped when `headSha` is no longer the PR's head. */
  "rerun-failed-jobs": { pr: number; headSha: string; workflowRunId: number };
  "rerequest-check-suite": { pr: number; headSha: string; checkSuiteId: number };
  "update-branch": { pr: number; expectedHeadSha: string };
  /** Answers dispatched / dispatch-refused. Dropped when the run is no longer live. */
  dispatch: { workflow: string; ref: string; inputs: Record<string, string> };
  /**
   * The Orchestra check run on a PR head: created once per sha, then updated.
   * What it shows (the task, its runs, reruns, the receipt) is read when it is
   * performed, so a late update never shows an older state.
   */
  "check-run": { headSha: string; prNumber: number };
  /**
   * The repository's "Orchestra fleet" issue (`fleetIssue: true`): found or
   * created once, then edited. Debounced: one effect per repository per
   * window (machine/fleet.ts), due at the window's end; what it shows is read
   * when it is performed, and an issue that already shows it is not edited.
   */
  "fleet-issue": { repo: string };
  /**
   * The GitHub tokens handed to the run's worker (`credentials: broker`),
   * revoked when its lease ends by any path: one per run (keyed by it).
   * The payload holds no token: the credentials room keeps them sealed until
   * they are revoked. A token GitHub no longer knows (401, 404) is done.
   */
  "revoke-credentials": { why: string };
}

export type EffectKind = keyof EffectPayloads;

export type EffectSpec = {
  [K in EffectKind]: {
    kind: K;
    key: string;
    payload: EffectPayloads[K];
    runId?: string;
    /** Not performed before this time (a debounced effect); unset: as soon as the executor gets to it. */
    at?: Date;
    /**
     * The repository's effect, not the task's (the fleet issue): recorded
     * without a task, so no task lists it or pays for its calls.
     */
    repoWide?: true;
    /**
     * Effects with the same coalescing key are interchangeable: each brings
     * one object on GitHub to what Orchestra shows when it is performed (the
     * task's label, the check run on one head, the fleet issue), so the
     * newest pending one does all that the older ones would and they are
     * dropped as superseded (src/effects/lanes.ts).
     */
    coalesce?: string;
    /** A lane other than its kind's (EFFECT_LANES): a claim's interlock label goes in "interlock". */
    lane?: Lane;
  };
}[EffectKind];

/**
 * The executor's lanes, first served first within an installation's pace:
 * a claim's interlock label (`agent:in-progress`: from then on GitHub says
 * the issue is taken), then the rest of what makes GitHub tell the truth
 * about who owns a task (the labels a claim replaces, a finished task's
 * label), then what people (or a task) wait for, then housekeeping. When
 * claims come faster than GitHub's pace lets their labels out, every
 * interlock still goes before any other write.
 */
export const LANES = ["interlock", "ownership", "waited-for", "housekeeping"] as const;
export type Lane = (typeof LANES)[number];

export const EFFECT_LANES: { readonly [K in EffectKind]: Lane } = {
  // A finished task's label, and what a claim's interlock replaces (the interlock itself: `lane: "interlock"`).
  label: "ownership",
  "remove-label": "ownership",
  // A finished run's tokens: no label waits behind them, and they go before any housekeeping.
  "revoke-credentials": "waited-for",
  comment: "waited-for",
  reaction: "waited-for",
  "create-pull": "waited-for",
  dispatch: "waited-for",
  "rerun-failed-jobs": "waited-for",
  "rerequest-check-suite": "waited-for",
  "update-branch": "waited-for",
  "check-run": "housekeeping",
  "delete-branch": "housekeeping",
  "delete-merged-branch": "housekeeping",
  "fleet-issue": "housekeeping",
};

/** The lane's rank, as stored with the effect (`Effect.lane`): 0 first. */
export function laneOf(e: EffectKind | Pick<EffectSpec, "kind" | "lane">): number {
  return typeof e === "string" ? LANES.indexOf(EFFECT_LANES[e]) : LANES.indexOf(e.lane ?? EFFECT_LANES[e.kind]);
}

/** Where an interlock effect goes once its label is on and what it replaces is left to do. */
export const OWNERSHIP_LANE = LANES.indexOf("ownership");

export function effect<K extends EffectKind>(
  kind: K,
  key: string,
  payload: EffectPayloads[K],
  runId?: string,
): EffectSpec {
  return { kind, key, payload, ...(runId ? { runId } : {}) } as EffectSpec;
}

/** One line for people: what the effect does (or, in dry run, would have done). */
export function describeEffect(e: EffectSpec): string {
  switch (e.kind) {
    case "label":
      return e.payload.label === null
        ? `remove every agent:* label from #${e.payload.issue}`
        : `label #${e.payload.issue} ${e.payload.label} (and remove ${e.payload.others.join(", ")})`;
    case "remove-label":
      return `remove label ${e.payload.label} from #${e.payload.issue}`;
    case "comment":
      return `comment on #${e.payload.issue}: ${e.payload.body.split("\n")[0]!.slice(0, 120)}`;
    case "reaction":
      return `react ${e.payload.content} to comment ${e.payload.commentId}`;
    case "delete-branch":
      return `delete branch ${e.payload.branch} (only if it holds no commits ahead and no PR)`;
    case "delete-merged-branch":
      return (
        `delete branch ${e.payload.branch} of merged pull request ` +
        `#${e.payload.pr} (only while it is still at the merged head)`
      );
    case "create-pull":
      return `open a pull request from ${e.payload.branch} for #${e.payload.issue} (only if its head checks are green)`;
    case "rerun-failed-jobs":
      return `rerun the failed jobs of Actions run ${e.payload.workflowRunId} on PR #${e.payload.pr}`;
    case "rerequest-check-suite":
      return `re-request check suite ${e.payload.checkSuiteId} on PR #${e.payload.pr}`;
    case "update-branch":
      return `update the branch of PR #${e.payload.pr} from its base`;
    case "dispatch":
      return `dispatch workflow ${e.payload.workflow}@${e.payload.ref} for run ${e.payload.inputs["run"] ?? "?"}`;
    case "check-run":
      return (
        `update the Orchestra check run ` +
        `on ${e.payload.headSha.slice(0, 12)} ` +
        `(pull request #${e.payload.prNumber})`
      );
    case "fleet-issue":
      return `bring the "Orchestra fleet" issue of ${e.payload.repo} up to date (create it if there is none)`;
    case "revoke-credentials":
      return `revoke the GitHub tokens handed to run ${e.runId ?? "?"} (its lease ended: ${e.payload.why})`;
  }
}
