/**
 * Whom a refused workflow dispatch is about. GitHub refuses a dispatch for
 * the whole repository when the workflow is missing (404), has no
 * `workflow_dispatch` trigger or is disabled (422), the ref it runs on is
 * missing (422 "No ref found"), or Actions are disabled or the App may not
 * run them (403): every task there would be refused the same way, so the
 * repository's breaker holds them all. A 422 about the inputs one dispatch
 * sent, or anything else, is about that task.
 */
export type RefusalScope = "repository" | "task";

const REPOSITORY_WIDE = [
  /workflow_dispatch' trigger/i,
  /disabled workflow/i,
  /no ref found/i,
  /actions (?:is|are|has been|have been) disabled/i,
];

/** `status`: GitHub's answer (undefined: none came); `message`: its message. */
export function refusalScope(status: number | undefined, message: string): RefusalScope {
  if (status === 404 || status === 403) return "repository";
  if (status === 422 && REPOSITORY_WIDE.some((p) => p.test(message))) return "repository";
  return "task";
}
