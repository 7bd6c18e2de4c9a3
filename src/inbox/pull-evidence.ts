/**
 * What GitHub's own signed deliveries say of a pull request, read from the inbox instead of asking GitHub again.
 * GitHub sends `pull_request.opened` when a worker opens its PR, usually before or just after the worker's exit
 * comes; an exit naming that PR is verified from the newest `pull_request` delivery stored for it, stored or
 * still waiting to be processed, when that delivery shows the run's branch in the task's repository at the head
 * the worker pushed. It waits briefly for one (a delivery on its way); when none comes, the caller reads GitHub.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { toPull, type RawPull } from "../github/mappers.js";
import type { PullInfo } from "../github/port.js";
import type { InboxQueries } from "./queries.js";
import { subjectKey } from "./task-key.js";

export interface PullExpectation {
  repo: string;
  branch: string;
  headSha: string;
}

export type PullEvidence = (
  installationId: number,
  number: number,
  expect: PullExpectation,
) => Promise<PullInfo | null>;

export interface PullEvidenceOptions {
  /** How long to wait for GitHub's delivery (default 3 s). */
  waitMs?: number;
  /** How often the inbox is looked at meanwhile (default 100 ms). */
  pollMs?: number;
}

/** The pull request a stored delivery's body shows, when it shows the expected head; else null. */
export function pullShown(payload: string, expect: PullExpectation): PullInfo | null {
  let raw: RawPull | undefined;
  try {
    raw = (JSON.parse(payload) as { pull_request?: RawPull }).pull_request;
  } catch {
    return null;
  }
  if (!raw?.head || !raw.base) return null;
  const pr = toPull(raw);
  return pr.headRef === expect.branch && pr.headRepo === expect.repo && pr.headSha === expect.headSha ? pr : null;
}

export function pullEvidence(
  queries: Pick<InboxQueries, "newestPayload">,
  opts: PullEvidenceOptions = {},
): PullEvidence {
  const waitMs = opts.waitMs ?? 3_000;
  const pollMs = opts.pollMs ?? 100;
  return async (installationId, number, expect) => {
    const taskKey = subjectKey(String(installationId), expect.repo, number);
    const started = performance.now();
    for (;;) {
      const payload = await queries.newestPayload(taskKey, "pull_request");
      const pr = payload === null ? null : pullShown(payload, expect);
      if (pr) return pr;
      if (performance.now() - started >= waitMs) return null;
      await sleep(pollMs);
    }
  };
}
