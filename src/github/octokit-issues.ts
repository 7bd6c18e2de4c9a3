/**
 * The port's issue methods on Probot's octokit (the issue half of
 * octokit.ts): issues, their labels, comments, reactions and dependencies.
 */
import type { ProbotOctokit } from "probot";
import type { GitHub } from "./port.js";
import { call, maybe } from "./errors.js";
import { toBlocker, type RawBlocker } from "./mappers.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

/** Per-call request options: a timeout, and no retries for writes. */
export interface CallOptions {
  request: { signal: AbortSignal; retries?: number };
}

type IssueMethods = Pick<GitHub, "getIssue" | "issueLabels" | "addLabels" | "removeLabel" | "createComment" | "listComments" | "addReaction" | "blockedBy">;

export function issueMethods(octokit: Octokit, read: () => CallOptions, write: () => CallOptions): IssueMethods {
  const rest = octokit.rest;
  return {
    async getIssue(r, number) {
      const res = await maybe("get issue", () => rest.issues.get({ ...r, issue_number: number, ...read() }));
      if (!res) return null;
      const i = res.data;
      return {
        number: i.number,
        title: i.title,
        body: i.body ?? "",
        state: i.state === "closed" ? "closed" : "open",
        labels: i.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))).filter(Boolean),
        author: i.user?.login ?? "",
        isPullRequest: Boolean(i.pull_request),
      };
    },
    async issueLabels(r, number) {
      const res = await maybe("list issue labels", () => rest.issues.listLabelsOnIssue({ ...r, issue_number: number, per_page: 100, ...read() }));
      return res ? res.data.map((l) => l.name) : null;
    },
    async addLabels(r, number, labels) {
      const { data } = await call("add labels", () => rest.issues.addLabels({ ...r, issue_number: number, labels, ...write() }));
      return data.map((l) => l.name);
    },
    async removeLabel(r, number, label) {
      // GitHub answers 404 when the label is not on the issue: already removed.
      await maybe("remove label", () => rest.issues.removeLabel({ ...r, issue_number: number, name: label, ...write() }));
    },
    async createComment(r, number, body) {
      const { data } = await call("create comment", () => rest.issues.createComment({ ...r, issue_number: number, body, ...write() }));
      return { id: data.id, body: data.body ?? "", author: data.user?.login ?? "", url: data.html_url };
    },
    async listComments(r, number, opts = {}) {
      const { data } = await call("list comments", () =>
        rest.issues.listComments({ ...r, issue_number: number, per_page: opts.perPage ?? 100, ...(opts.since ? { since: opts.since.toISOString() } : {}), ...read() }),
      );
      return data.map((c) => ({ id: c.id, body: c.body ?? "", author: c.user?.login ?? "", url: c.html_url }));
    },
    async addReaction(r, commentId, content) {
      await call("add reaction", () => rest.reactions.createForIssueComment({ ...r, comment_id: commentId, content, ...write() }));
    },
    async blockedBy(r, issue) {
      // Every page: a blocker missed on page two would let a blocked issue run.
      const items = await call("list blocked-by dependencies", () =>
        octokit.paginate(rest.issues.listDependenciesBlockedBy, { ...r, issue_number: issue, per_page: 100, ...read() }),
      );
      return (items as RawBlocker[]).map(toBlocker);
    },
  };
}
