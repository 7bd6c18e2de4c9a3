// A busy installation's backlog: `count` GitHub writes already waiting in the outbox when the issues are
// queued — half of them replies on a long discussion (comments people wait for), half stale branches of
// released runs to delete (housekeeping). Rows are written straight into the outbox, as the service writes
// them; what is measured is how the claims' interlock labels get past them at GitHub's pace.
import { randomUUID } from "node:crypto";
import { openDatabase } from "../../src/store/db.js";
import { laneOf, type EffectKind } from "../../src/machine/effects.js";
import type { RecordedRequest } from "../../test/fake-github/http.js";
import { INSTALLATION, MAINTAINER, REPO, type FleetGitHub } from "./github.js";

/** The backlog's branches: their requests are left out of the per-task figures. */
export const BACKLOG_BRANCH = "agent/stale-";
/** The issue the backlog's replies go to, far above the queued ones. */
export const BACKLOG_ISSUE = 9_000;

export async function seedBacklog(gh: FleetGitHub, databaseUrl: string, count: number): Promise<void> {
  if (count <= 0) return;
  gh.fake.state.addIssue(REPO, { number: BACKLOG_ISSUE, title: "A long discussion", user: MAINTAINER });
  const now = new Date();
  const row = (i: number, kind: EffectKind, payload: unknown) => ({
    id: randomUUID(),
    key: `bench-backlog:${i}`,
    installationId: INSTALLATION,
    repo: REPO,
    kind,
    payload: JSON.stringify(payload),
    state: "pending",
    nextAttemptAt: now,
    createdAt: now,
    lane: laneOf(kind),
  });
  const rows = Array.from({ length: count }, (_, i) => {
    if (i % 2 === 0) return row(i, "comment", { issue: BACKLOG_ISSUE, body: `Reply ${i / 2 + 1}` });
    const branch = `${BACKLOG_BRANCH}${i}`;
    gh.fake.state.addBranch(REPO, branch);
    return row(i, "delete-branch", { branch, attempt: 1 });
  });
  const database = await openDatabase(databaseUrl, { poolSize: 1 });
  try {
    await database.db.effect.createMany({ data: rows });
  } finally {
    await database.close();
  }
}

const mentionsBacklog = (r: RecordedRequest): boolean => {
  const p = decodeURIComponent(r.path) + " " + Object.values(r.query).join(" ");
  return p.includes(BACKLOG_BRANCH) || p.includes(`/issues/${BACKLOG_ISSUE}/`);
};

/**
 * The requests the backlog's own effects made: those naming its branches (in the path or the query) or its
 * issue, and a stale-branch delete's read of the repository's default branch, which names neither: the
 * repository read that comes right before one of the delete's own requests (an installation's effects are
 * performed one at a time).
 */
export function backlogRequests(requests: readonly RecordedRequest[]): Set<RecordedRequest> {
  const api = requests.filter((r) => r.operationId?.startsWith("git:") !== true);
  const out = new Set<RecordedRequest>();
  api.forEach((r, i) => {
    const next = api[i + 1];
    if (mentionsBacklog(r) || (r.route === "GET /repos/{owner}/{repo}" && next && mentionsBacklog(next))) out.add(r);
  });
  return out;
}
