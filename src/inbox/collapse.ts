/**
 * Collapsing a hot key's backlog: a run of consecutive deliveries of one task
 * key that say the same is processed once, as its newest; the older ones are
 * stored as ignored with a note naming the newest. What a delivery says is
 * its `collapse` signature, taken at ingest; a delivery without one is always
 * processed.
 *
 * The rule is conservative. Two deliveries share a signature only when their
 * handler decides on exactly the same inputs, so that processing the older
 * one first could not change what is decided: the newer one, processed right
 * after, would make the same decision again or find it made. And only
 * consecutive ones collapse: nothing else on the key is reordered around them.
 *
 * - A failing check run, check suite or (not dispatched) workflow run
 *   completion: the handler only picks the PR head to look at (the sha and the
 *   pull requests GitHub matched, this repository's) and then reads the PR and
 *   every check on that sha from GitHub now. Same sha and pull requests: same
 *   decision.
 * - A passing one, or a workflow run that is not a completion: the handler does
 *   nothing with it.
 * - An `issues.labeled`/`unlabeled` sent by Orchestra itself (its own label
 *   change, echoed back): the handler only counts it. What the delivery says
 *   of the issue's labels is kept from the newest one, which is the latest.
 * - Any other label change: the same label, action, sender, issue state, body
 *   and whole label set is the same input to trust and to the machine.
 */

import { createHash } from "node:crypto";

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Conclusions the check handlers do nothing with (src/webhooks/checks.ts). */
const PASSING = new Set(["success", "neutral", "skipped"]);
const failed = (conclusion: unknown) => typeof conclusion === "string" && !PASSING.has(conclusion);

/** The pull requests a check handler acts on: GitHub's matched ones whose head is in this repository. */
function ownPulls(prs: unknown): number[] {
  if (!Array.isArray(prs)) return [];
  const out: number[] = [];
  for (const p of prs) {
    const pr = obj(p);
    const head = obj(obj(pr?.["head"])?.["repo"])?.["id"];
    const base = obj(obj(pr?.["base"])?.["repo"])?.["id"];
    if (typeof pr?.["number"] === "number" && head !== undefined && head === base) out.push(pr["number"]);
  }
  return out.sort((a, b) => a - b);
}

/** A check handler's inputs: the head sha and pull requests, or null when one is missing. */
function checkOn(sha: unknown, pulls: number[]): string | null {
  const s = str(sha);
  return s ? `checks:failed:${s}:${pulls.join(",")}` : null;
}

const labelNames = (labels: unknown): string[] | null =>
  Array.isArray(labels) ? labels.map((l) => (typeof l === "string" ? l : (str(obj(l)?.["name"]) ?? ""))).sort() : null;

/**
 * What a delivery says, for collapsing; null when it is always processed.
 * `self`: Orchestra's own login (its bot), when known; unknown, no delivery
 * counts as its echo.
 */
export function collapseOf(event: string, action: string | null, payload: Obj, self: string | null): string | null {
  if (event === "check_run" || event === "check_suite") {
    if (action !== "completed") return null;
    const c = obj(payload[event]);
    if (!c) return null;
    return failed(c["conclusion"]) ? checkOn(c["head_sha"], ownPulls(c["pull_requests"])) : "checks:nothing";
  }
  if (event === "workflow_run") {
    const w = obj(payload["workflow_run"]);
    // A dispatched workflow's run is a run's heartbeat and exit (src/dispatch): never collapsed.
    if (!w || str(w["event"]) === undefined || w["event"] === "workflow_dispatch") return null;
    if (action !== "completed" || !failed(w["conclusion"])) return "checks:nothing";
    const own = str(obj(w["head_repository"])?.["full_name"]) === str(obj(payload["repository"])?.["full_name"]);
    return checkOn(w["head_sha"], own ? ownPulls(w["pull_requests"]) : []);
  }
  if (event === "issues" && (action === "labeled" || action === "unlabeled")) {
    const sender = obj(payload["sender"]);
    const login = str(sender?.["login"]);
    const type = str(sender?.["type"]);
    if (login === undefined || type === undefined) return null;
    if (self !== null && type === "Bot" && login.toLowerCase() === self.toLowerCase()) return "labels:own-echo";
    const issue = obj(payload["issue"]);
    const labels = labelNames(issue?.["labels"]);
    const label = str(obj(payload["label"])?.["name"]);
    if (!issue || labels === null || label === undefined) return null;
    return JSON.stringify([
      "labels",
      action,
      label,
      type,
      login,
      str(issue["state"]) ?? "",
      issue["pull_request"] !== undefined && issue["pull_request"] !== null,
      labels,
      // Whether it is the fleet issue is read from its body.
      createHash("sha256")
        .update(str(issue["body"]) ?? "")
        .digest("hex"),
    ]);
  }
  return null;
}

/** How many of `newer` (a key's next pending deliveries, oldest first) continue the run `head` starts. */
export function runLength(
  head: { collapse: string | null; attempts: number },
  newer: ReadonlyArray<{ collapse: string | null; attempts: number }>,
): number {
  if (head.collapse === null || head.attempts !== 0) return 0;
  let n = 0;
  while (n < newer.length && newer[n]!.collapse === head.collapse && newer[n]!.attempts === 0) n++;
  return n;
}
