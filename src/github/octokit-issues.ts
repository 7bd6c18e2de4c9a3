/**
 * The port's issue methods on Probot's octokit (the issue half of
 * octokit.ts): issues, their labels, comments, reactions and dependencies,
 * and the host's release (whether it has dependencies at all).
 */
import type { ProbotOctokit } from "probot";
import { GitHubError, type GitHub, type IssueInfo, type IssueLabel } from "./port.js";
import { call, maybe, toGitHubError } from "./errors.js";
import { swapLabelsDocument, type SwapLabelsMutation } from "./queries.js";
import { toBlocker, type RawBlocker } from "./mappers.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

/** Per-call request options: a timeout, and no retries for writes. */
export interface CallOptions {
  request: { signal: AbortSignal; retries?: number };
}

type IssueMethods = Pick<
  GitHub,
  | "getIssue"
  | "createIssue"
  | "updateIssueBody"
  | "issuesCreatedBy"
  | "issueLabels"
  | "addLabels"
  | "removeLabel"
  | "findLabels"
  | "swapLabels"
  | "createComment"
  | "listComments"
  | "addReaction"
  | "blockedBy"
  | "hostVersion"
>;

interface RawIssue {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  labels: Array<string | { name?: string }>;
  user: { login: string } | null;
  pull_request?: unknown;
}

function toIssue(i: RawIssue): IssueInfo {
  return {
    number: i.number,
    title: i.title,
    body: i.body ?? "",
    state: i.state === "closed" ? "closed" : "open",
    labels: i.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))).filter(Boolean),
    author: i.user?.login ?? "",
    isPullRequest: Boolean(i.pull_request),
  };
}

const toLabel = (l: { name: string; node_id: string }): IssueLabel => ({ name: l.name, nodeId: l.node_id });

type GraphqlError = { type?: unknown; message?: unknown; path?: unknown } | null;

/** The data and errors of a GraphQL answer with errors (octokit's GraphqlResponseError); null for another failure. */
function answered(e: unknown): { data: SwapLabelsMutation; errors: GraphqlError[] } | null {
  const err = e as { name?: unknown; errors?: unknown; data?: unknown } | null;
  if (err?.name !== "GraphqlResponseError" || !Array.isArray(err.errors)) return null;
  return { data: (err.data ?? {}) as SwapLabelsMutation, errors: err.errors as GraphqlError[] };
}

/** Which swap of a SwapLabels document an error is about (its alias, `added<i>` or `removed<i>`), if any. */
function swapOf(x: GraphqlError): number | undefined {
  const first = Array.isArray(x?.path) ? (x.path as unknown[])[0] : undefined;
  const m = typeof first === "string" ? /^(?:added|removed)(\d+)$/.exec(first) : null;
  return m ? Number(m[1]) : undefined;
}

/** Like maybe, but an issue GitHub answers 410 for (deleted) is absent too. */
async function gone<T>(operation: string, fn: () => Promise<T>): Promise<T | null> {
  try {
    return await maybe(operation, fn);
  } catch (e) {
    if (e instanceof GitHubError && e.status === 410) return null;
    throw e;
  }
}

export function issueMethods(octokit: Octokit, read: () => CallOptions, write: () => CallOptions): IssueMethods {
  const rest = octokit.rest;
  return {
    async getIssue(r, number) {
      const res = await gone("get issue", () => rest.issues.get({ ...r, issue_number: number, ...read() }));
      return res ? toIssue(res.data) : null;
    },
    async createIssue(r, issue) {
      const { data } = await call("create issue", () =>
        rest.issues.create({ ...r, title: issue.title, body: issue.body, ...write() }),
      );
      return toIssue(data);
    },
    async updateIssueBody(r, number, body) {
      const res = await gone("update issue", () =>
        rest.issues.update({ ...r, issue_number: number, body, ...write() }),
      );
      return res ? toIssue(res.data) : null;
    },
    async issuesCreatedBy(r, creator, opts = {}) {
      const out: IssueInfo[] = [];
      for (let page = 1; page <= (opts.pages ?? 5); page++) {
        const { data } = await call("list issues", () =>
          rest.issues.listForRepo({
            ...r,
            creator,
            state: opts.state ?? "all",
            sort: "created",
            direction: "desc",
            per_page: 100,
            page,
            ...read(),
          }),
        );
        for (const i of data) if (!i.pull_request) out.push(toIssue(i));
        if (data.length < 100) break;
      }
      return out;
    },
    async issueLabels(r, number) {
      const res = await maybe("list issue labels", () =>
        rest.issues.listLabelsOnIssue({ ...r, issue_number: number, per_page: 100, ...read() }),
      );
      return res ? res.data.map(toLabel) : null;
    },
    async addLabels(r, number, labels) {
      const { data } = await call("add labels", () =>
        rest.issues.addLabels({ ...r, issue_number: number, labels, ...write() }),
      );
      return data.map(toLabel);
    },
    async removeLabel(r, number, label) {
      // GitHub answers 404 when the label is not on the issue: already removed.
      const res = await maybe("remove label", () =>
        rest.issues.removeLabel({ ...r, issue_number: number, name: label, ...write() }),
      );
      return res ? res.data.map(toLabel) : null;
    },
    async findLabels(r, names) {
      const found = await Promise.all(
        names.map((name) => maybe("get label", () => rest.issues.getLabel({ ...r, name, ...read() }))),
      );
      return found.flatMap((res) => (res ? [toLabel(res.data)] : []));
    },
    async swapLabels(swaps) {
      if (swaps.length === 0) return [];
      const vars: Record<string, string | string[]> = {};
      swaps.forEach((s, i) =>
        Object.assign(vars, { [`issue${i}`]: s.issueId, [`add${i}`]: s.add, [`remove${i}`]: s.remove }),
      );
      let data: SwapLabelsMutation;
      let errors: GraphqlError[] = [];
      try {
        data = await octokit.graphql<SwapLabelsMutation>(swapLabelsDocument(swaps.length), { ...vars, ...write() });
      } catch (e) {
        const a = answered(e);
        // An error that names no swap (the document refused, a rate limit) is the whole request's.
        if (!a || a.errors.some((x) => swapOf(x) === undefined)) throw toGitHubError("swap labels", e);
        ({ data, errors } = a);
      }
      return swaps.map((_, i) => {
        const mine = errors.filter((x) => swapOf(x) === i);
        // GitHub's answer that one of its nodes is not there (a NOT_FOUND beside what it did of the rest).
        if (mine.length > 0 && mine.every((x) => x?.type === "NOT_FOUND")) return null;
        if (mine.length > 0) return toGitHubError("swap labels", { name: "GraphqlResponseError", errors: mine });
        const labels = data[`removed${i}`]?.labelable?.labels;
        if (!labels) return new GitHubError("swap labels", undefined, "no labels in the answer", false);
        return (labels.nodes ?? []).flatMap((n) => (n ? [{ name: n.name, nodeId: n.id }] : []));
      });
    },
    async createComment(r, number, body) {
      const { data } = await call("create comment", () =>
        rest.issues.createComment({ ...r, issue_number: number, body, ...write() }),
      );
      return { id: data.id, body: data.body ?? "", author: data.user?.login ?? "", url: data.html_url };
    },
    async listComments(r, number, opts = {}) {
      const { data } = await call("list comments", () =>
        rest.issues.listComments({
          ...r,
          issue_number: number,
          per_page: opts.perPage ?? 100,
          ...(opts.since ? { since: opts.since.toISOString() } : {}),
          ...read(),
        }),
      );
      return data.map((c) => ({ id: c.id, body: c.body ?? "", author: c.user?.login ?? "", url: c.html_url }));
    },
    async addReaction(r, commentId, content) {
      await call("add reaction", () =>
        rest.reactions.createForIssueComment({ ...r, comment_id: commentId, content, ...write() }),
      );
    },
    async blockedBy(r, issue) {
      // Every page: a blocker missed on page two would let a blocked issue run.
      const items = await call("list blocked-by dependencies", () =>
        octokit.paginate(rest.issues.listDependenciesBlockedBy, {
          ...r,
          issue_number: issue,
          per_page: 100,
          ...read(),
        }),
      );
      return (items as RawBlocker[]).map(toBlocker);
    },
    async hostVersion() {
      // api.github.com and GHEC describe no `installed_version`; every GHES release does.
      const { data } = await call("get meta", () => rest.meta.get({ ...read() }));
      const v = (data as { installed_version?: unknown }).installed_version;
      return { ghes: typeof v === "string" && v ? v : null };
    },
  };
}
