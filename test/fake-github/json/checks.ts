/** Check runs and check suites, with the pull requests GitHub matches to a suite. */
import type { CheckRun, CheckSuite, Repo } from "../state.js";
import { nodeId, ts, type Json } from "./core.js";
import { PullJson } from "./pulls.js";

export class CheckJson extends PullJson {
  checkRun(r: Repo, c: CheckRun): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/check-runs/${c.id}`;
    const job = r.jobs.get(c.id);
    const html = job
      ? `${this.urls.web}/${r.fullName}/actions/runs/${job.runId}/job/${job.id}`
      : `${this.urls.web}/${r.fullName}/runs/${c.id}`;
    return {
      id: c.id,
      head_sha: c.headSha,
      node_id: nodeId("CR", c.id),
      external_id: c.externalId ?? (job ? String(job.id) : ""),
      url: api,
      html_url: html,
      details_url: c.detailsUrl ?? html,
      status: c.status,
      conclusion: c.conclusion,
      started_at: ts(c.startedAt),
      completed_at: ts(c.completedAt),
      output: {
        title: c.output.title,
        summary: c.output.summary,
        text: c.output.text,
        annotations_count: c.output.annotationsCount,
        annotations_url: `${api}/annotations`,
      },
      name: c.name,
      check_suite: { id: c.suiteId },
      app: this.app(c.app),
      pull_requests: this.pullsForSuite(r, r.checkSuites.get(c.suiteId)),
    };
  }

  checkSuite(r: Repo, s: CheckSuite): Json {
    const { status, conclusion } = this.state.suiteStatus(r, s);
    const head = r.commits.get(s.headSha);
    return {
      id: s.id,
      node_id: nodeId("CS", s.id),
      // GitHub: null when the suite's head branch is in a fork
      head_branch: s.headRepo ? null : s.headBranch,
      head_sha: s.headSha,
      status,
      conclusion,
      url: `${this.urls.api}/repos/${r.fullName}/check-suites/${s.id}`,
      before: head?.parents[0] ?? "0000000000000000000000000000000000000000",
      after: s.headSha,
      pull_requests: this.pullsForSuite(r, s),
      app: this.app(s.app),
      repository: this.minimalRepo(r),
      created_at: ts(s.createdAt),
      updated_at: ts(s.updatedAt),
      head_commit: head ? this.simpleCommit(head) : null,
      latest_check_runs_count: this.state.latestCheckRuns(r, s.headSha).filter((c) => c.suiteId === s.id).length,
      check_runs_url: `${this.urls.api}/repos/${r.fullName}/check-suites/${s.id}/check-runs`,
      rerequestable: true,
      runs_rerequestable: true,
    };
  }

  /**
   * The pull requests GitHub matches to a check suite (and to its check runs
   * and workflow run): the open ones of this repository whose head branch is
   * the suite's (the sha may differ after later pushes), in a minimal shape;
   * none for a suite of a fork's branch, whatever its sha.
   */
  protected pullsForSuite(r: Repo, suite: CheckSuite | undefined): Json[] {
    if (!suite || suite.headRepo || !suite.headBranch) return [];
    return [...r.pulls.values()]
      .filter((p) => p.headRef === suite.headBranch && !p.headRepo && r.issues.get(p.number)?.state === "open")
      .map((p) => ({
        id: p.id,
        number: p.number,
        url: `${this.urls.api}/repos/${r.fullName}/pulls/${p.number}`,
        head: {
          ref: p.headRef,
          sha: p.headSha,
          repo: { id: r.id, url: `${this.urls.api}/repos/${r.fullName}`, name: r.name },
        },
        base: {
          ref: p.baseRef,
          sha: r.branches.get(p.baseRef) ?? "",
          repo: { id: r.id, url: `${this.urls.api}/repos/${r.fullName}`, name: r.name },
        },
      }));
  }
}
