/**
 * What ingest stores a delivery as: pending (work for the processor), or
 * ignored at once, with the reason kept on the row and counted. A delivery
 * that can never act is ignored here instead of waiting behind its task key
 * for the processor to find that out.
 *
 * Only positive evidence ignores: an installation that is not known to be
 * unmanaged (none read yet, the read failed) is managed, and its delivery
 * waits as before; the router asks again when it is processed.
 */
import { INSTALLATION_EVENTS } from "../inbox/task-key.js";

/**
 * Handled events whose handlers can do nothing without an installation: each
 * returns (or counts `ignored.unmanaged`) before any write, or needs the
 * installation's GitHub token to get further. Events left out still act
 * without one (a pull request found by its branch, a dispatched workflow's
 * run, a push that invalidates a cached config, an issue closing its task).
 */
export const NEEDS_INSTALLATION: ReadonlySet<string> = new Set([
  "issues.labeled",
  "issues.unlabeled",
  "issues.reopened",
  "issues.deleted",
  "issues.transferred",
  "issue_comment.created",
  "issue_comment.edited",
  "issue_dependencies",
  "sub_issues",
  "pull_request_review.submitted",
  "check_run.completed",
  "check_suite.completed",
]);

export interface VerdictInput {
  event: string;
  action: string | null;
  installationId: string | null;
  /** Whether any capability handles the event and action. */
  handled: boolean;
  /** Why Orchestra does not manage the delivery's installation, when that is known; else null. */
  unmanaged: string | null;
}

export type Verdict = { state: "pending" } | { state: "ignored"; why: "unhandled" | "unmanaged"; note: string };

const named = (event: string, action: string | null) => (action ? `${event}.${action}` : event);

export function needsInstallation(event: string, action: string | null): boolean {
  return NEEDS_INSTALLATION.has(event) || (action !== null && NEEDS_INSTALLATION.has(`${event}.${action}`));
}

/** Whether to ask if the delivery's installation is managed: handled, named, and not about the installation. */
export function asksStanding(v: Omit<VerdictInput, "unmanaged">): boolean {
  return v.handled && v.installationId !== null && !INSTALLATION_EVENTS.has(v.event);
}

export function verdictOf(v: VerdictInput): Verdict {
  const what = named(v.event, v.action);
  if (!v.handled) return { state: "ignored", why: "unhandled", note: `unhandled: no capability handles ${what}` };
  // A reinstall, an unsuspend: the installation's own events always pass.
  if (INSTALLATION_EVENTS.has(v.event)) return { state: "pending" };
  if (v.installationId === null)
    return needsInstallation(v.event, v.action)
      ? { state: "ignored", why: "unmanaged", note: `unmanaged: ${what} names no installation` }
      : { state: "pending" };
  if (v.unmanaged !== null)
    return { state: "ignored", why: "unmanaged", note: `unmanaged: installation ${v.installationId}: ${v.unmanaged}` };
  return { state: "pending" };
}
