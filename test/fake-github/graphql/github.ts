/**
 * What the fake serves of GitHub's GraphQL schema, over its state. A field
 * is a property of the same name; fields with arguments, connections and
 * cyclic links (PR → closing issues → closing PRs) are functions, so a query
 * only computes what it selects. `served([...], fn)` lists the arguments a
 * function honours: any other one in a query is reported as not served.
 * Polymorphic values (Actor, IssueOrPullRequest, GitObject, timeline
 * items) carry `__typename` so graphql-js can pick their type.
 */
import { nodeId, ts, type Serializer } from "../json.js";
import { headRepoOf } from "../forks.js";
import { reviewDecision } from "../pull-reads.js";
import type { FakeState, Issue, Label, LabelEvent, Pull, Repo } from "../state.js";
import { GraphQLFieldError, NotServed, served } from "./execute.js";

export interface GraphQLContext {
  state: FakeState;
  json: Serializer;
  /** the calling installation; repositories of other installations are invisible */
  installationId: number | null;
}

type Node = Record<string, unknown>;
type Page = { first?: number | null; last?: number | null; after?: string | null };
const PAGE = ["first", "last", "after"] as const;

export function connection<T>(items: T[], args: Page): Node {
  let start = 0;
  if (typeof args.after === "string") {
    const n = Number(
      Buffer.from(args.after, "base64")
        .toString("utf8")
        .replace(/^cursor:/, ""),
    );
    if (Number.isInteger(n)) start = n + 1;
  }
  let slice = items.slice(start);
  if (typeof args.first === "number") slice = slice.slice(0, args.first);
  if (typeof args.last === "number") slice = slice.slice(Math.max(slice.length - args.last, 0));
  const offset = items.indexOf(slice[0] as T);
  const cursor = (i: number): string => Buffer.from(`cursor:${offset + i}`).toString("base64");
  return {
    totalCount: items.length,
    nodes: slice,
    edges: slice.map((node, i) => ({ node, cursor: cursor(i) })),
    pageInfo: {
      // an empty page (after the last cursor) has nothing after it
      hasNextPage: slice.length > 0 && offset + slice.length < items.length,
      hasPreviousPage: offset > 0,
      startCursor: slice.length ? cursor(0) : null,
      endCursor: slice.length ? cursor(slice.length - 1) : null,
    },
  };
}

/**
 * An Actor. GraphQL names a bot by its App's slug (`orchestra-test`), not by
 * the `orchestra-test[bot]` of REST and webhooks; only `viewer` keeps the
 * suffix (see githubRoot).
 */
function actor(ctx: GraphQLContext, login: string): Node {
  const u = ctx.state.user(login);
  const bot = u.type === "Bot";
  const name = bot ? u.login.replace(/\[bot\]$/i, "") : u.login;
  return {
    __typename: bot ? "Bot" : u.type === "Organization" ? "Organization" : "User",
    login: name,
    id: nodeId(bot ? "BOT" : "U", u.id),
    url: bot ? `${ctx.json.urls.web}/apps/${name}` : `${ctx.json.urls.web}/${u.login}`,
  };
}

function labelNode(l: Pick<Label, "id" | "name" | "color" | "description">): Node {
  return { __typename: "Label", id: nodeId("LA", l.id), name: l.name, color: l.color, description: l.description };
}

function labels(ctx: GraphQLContext, repo: Repo, issue: Issue) {
  return served(PAGE, (args: Page) =>
    connection(
      issue.labels.map((n) => labelNode(repo.labels.get(n.toLowerCase())!)),
      args,
    ),
  );
}

/** A label added to the issue: its label as it is now (renamed or not), or as it was if since deleted. */
function labeledEvent(ctx: GraphQLContext, repo: Repo, issue: Issue, e: LabelEvent): Node {
  const label = [...repo.labels.values()].find((l) => l.id === e.labelId) ?? {
    id: e.labelId,
    name: e.labelName,
    color: "ededed",
    description: null,
  };
  return {
    __typename: "LabeledEvent",
    id: nodeId("LE", e.id),
    createdAt: ts(e.createdAt),
    label: labelNode(label),
    actor: actor(ctx, e.actor),
    labelable: () => {
      const pr = repo.pulls.get(issue.number);
      return pr ? pullNode(ctx, repo, pr) : issueNode(ctx, repo, issue);
    },
  };
}

type TimelineArgs = Page & { itemTypes?: string[] | null };

/** The fake records labeled events only: a timeline read must ask for LABELED_EVENT items and no others. */
function labelTimeline(ctx: GraphQLContext, repo: Repo, issue: Issue) {
  return served([...PAGE, "itemTypes"], (args: TimelineArgs) => {
    const types = args.itemTypes ?? [];
    const others = types.filter((t) => t !== "LABELED_EVENT");
    if (!types.length || others.length) {
      throw new NotServed(
        `the fake GitHub serves only LABELED_EVENT items of timelineItems (asked for ${types.length ? others.join(", ") : "every item type"})`,
      );
    }
    return connection(
      repo.labelEvents.filter((e) => e.issueNumber === issue.number).map((e) => labeledEvent(ctx, repo, issue, e)),
      args,
    );
  });
}

export function pullNode(ctx: GraphQLContext, repo: Repo, pr: Pull): Node {
  const { state, json } = ctx;
  const issue = repo.issues.get(pr.number)!;
  const stateName = pr.merged ? "MERGED" : issue.state === "open" ? "OPEN" : "CLOSED";
  const baseOid = repo.branches.get(pr.baseRef) ?? null;
  const headRepo = headRepoOf(state, repo, pr);
  return {
    __typename: "PullRequest",
    id: nodeId("PR", pr.id),
    databaseId: pr.id,
    number: pr.number,
    title: issue.title,
    body: issue.body ?? "",
    url: `${json.urls.web}/${repo.fullName}/pull/${pr.number}`,
    state: stateName,
    closed: issue.state === "closed",
    merged: pr.merged,
    mergedAt: ts(pr.mergedAt),
    closedAt: ts(issue.closedAt),
    createdAt: ts(issue.createdAt),
    updatedAt: ts(issue.updatedAt),
    isDraft: pr.draft,
    mergeable: state.pullMergeable(repo, pr),
    mergeStateStatus: state.pullMergeState(repo, pr),
    headRefName: pr.headRef,
    headRefOid: pr.headSha,
    baseRefName: pr.baseRef,
    baseRefOid: baseOid,
    // a fork's branch, or one of this repository (see forks.ts)
    headRepository: () => repoNode(ctx, headRepo),
    headRepositoryOwner: () => actor(ctx, headRepo.owner),
    isCrossRepository: headRepo !== repo,
    maintainerCanModify: pr.maintainerCanModify,
    reviewDecision: () => reviewDecision(repo, pr),
    mergeCommit: pr.mergeCommitSha ? { __typename: "Commit", oid: pr.mergeCommitSha } : null,
    author: actor(ctx, issue.user),
    repository: () => repoNode(ctx, repo),
    labels: labels(ctx, repo, issue),
    closingIssuesReferences: served(PAGE, (args: Page) =>
      connection(
        state
          .closingIssues(repo, pr)
          .map((n) => repo.issues.get(n))
          .filter((i): i is Issue => !!i)
          .map((i) => issueNode(ctx, repo, i)),
        args,
      ),
    ),
    commits: served(PAGE, (args: Page) => {
      const base = baseOid ?? pr.headSha;
      const list = state.compare(repo, base, pr.headSha).ahead.map((c) => ({
        __typename: "PullRequestCommit",
        commit: {
          __typename: "Commit",
          oid: c.sha,
          message: c.message,
          statusCheckRollup: rollup(state, repo, c.sha),
        },
      }));
      return connection(list, args);
    }),
  };
}

function rollup(state: FakeState, repo: Repo, sha: string): Node | null {
  const runs = state.latestCheckRuns(repo, sha);
  if (!runs.length) return null;
  const pending = runs.some((r) => r.status !== "completed");
  const failed = runs.some((r) => r.conclusion && !["success", "neutral", "skipped"].includes(r.conclusion));
  return { state: failed ? "FAILURE" : pending ? "PENDING" : "SUCCESS" };
}

export function issueNode(ctx: GraphQLContext, repo: Repo, issue: Issue): Node {
  const { state, json } = ctx;
  return {
    __typename: "Issue",
    id: nodeId("I", issue.id),
    databaseId: issue.id,
    number: issue.number,
    title: issue.title,
    body: issue.body ?? "",
    url: `${json.urls.web}/${repo.fullName}/issues/${issue.number}`,
    state: issue.state === "open" ? "OPEN" : "CLOSED",
    stateReason: issue.stateReason ? issue.stateReason.toUpperCase() : null,
    closed: issue.state === "closed",
    closedAt: ts(issue.closedAt),
    createdAt: ts(issue.createdAt),
    updatedAt: ts(issue.updatedAt),
    author: actor(ctx, issue.user),
    repository: () => repoNode(ctx, repo),
    labels: labels(ctx, repo, issue),
    timelineItems: labelTimeline(ctx, repo, issue),
    // open or closed, in the order they were added; they may live in other repositories
    subIssues: served(PAGE, (args: Page) =>
      connection(
        state.subIssues.childrenOf(issue).map((c) => issueNode(ctx, c.repo, c.issue)),
        args,
      ),
    ),
    // Without includeClosedPrs, closed-unmerged PRs are left out; merged ones stay.
    closedByPullRequestsReferences: served(
      [...PAGE, "includeClosedPrs"],
      (args: Page & { includeClosedPrs?: boolean }) =>
        connection(
          state
            .closingPulls(repo, issue.number)
            .filter((pr) => args.includeClosedPrs || pr.merged || repo.issues.get(pr.number)?.state === "open")
            .map((pr) => pullNode(ctx, repo, pr)),
          args,
        ),
    ),
  };
}

export function repoNode(ctx: GraphQLContext, repo: Repo): Node {
  const defaultOid = repo.branches.get(repo.defaultBranch) ?? null;
  return {
    __typename: "Repository",
    id: nodeId("R", repo.id),
    databaseId: repo.id,
    name: repo.name,
    nameWithOwner: repo.fullName,
    url: `${ctx.json.urls.web}/${repo.fullName}`,
    isPrivate: repo.isPrivate,
    isFork: repo.parent !== null,
    parent: () => (repo.parent ? repoNode(ctx, repo.parent) : null),
    owner: actor(ctx, repo.owner),
    defaultBranchRef: {
      __typename: "Ref",
      name: repo.defaultBranch,
      target: defaultOid ? { __typename: "Commit", oid: defaultOid } : null,
    },
    pullRequest: served(["number"], ({ number }: { number?: number }) => {
      const pr = repo.pulls.get(Number(number));
      if (!pr)
        throw new GraphQLFieldError("NOT_FOUND", `Could not resolve to a PullRequest with the number of ${number}.`);
      return pullNode(ctx, repo, pr);
    }),
    pullRequests: served([...PAGE, "states", "baseRefName", "headRefName", "orderBy"], (args: PullRequestsArgs) =>
      connection(
        pullsOf(repo, args).map((pr) => pullNode(ctx, repo, pr)),
        args,
      ),
    ),
    deleteBranchOnMerge: repo.deleteBranchOnMerge,
    ref: served(["qualifiedName"], ({ qualifiedName }: { qualifiedName?: string }) =>
      refByName(ctx, repo, String(qualifiedName)),
    ),
    refs: served([...PAGE, "refPrefix", "query"], (args: RefsArgs) => connection(refsOf(ctx, repo, args), args)),
    issues: served([...PAGE, "labels", "states", "orderBy"], (args: IssuesArgs) =>
      connection(
        issuesOf(repo, args).map((i) => issueNode(ctx, repo, i)),
        args,
      ),
    ),
    issue: served(["number"], ({ number }: { number?: number }) => {
      const issue = repo.issues.get(Number(number));
      if (!issue || issue.isPull) {
        throw new GraphQLFieldError("NOT_FOUND", `Could not resolve to an Issue with the number of ${number}.`);
      }
      return issueNode(ctx, repo, issue);
    }),
    issueOrPullRequest: served(["number"], ({ number }: { number?: number }) => {
      const issue = repo.issues.get(Number(number));
      if (!issue) {
        throw new GraphQLFieldError(
          "NOT_FOUND",
          `Could not resolve to an issue or pull request with the number of ${number}.`,
        );
      }
      const pr = repo.pulls.get(issue.number);
      return pr ? pullNode(ctx, repo, pr) : issueNode(ctx, repo, issue);
    }),
  };
}

type RefsArgs = Page & { refPrefix?: string | null; query?: string | null };

/**
 * `Repository.refs`: branches under `refPrefix` (only `refs/heads/…` is
 * modelled), named without the prefix, sorted by name like GitHub's
 * default; `query` keeps the names containing it.
 */
function refsOf(ctx: GraphQLContext, repo: Repo, args: RefsArgs): Node[] {
  const prefix = args.refPrefix ?? "";
  if (!prefix.startsWith("refs/heads/")) return [];
  return [...repo.branches.entries()]
    .map(([branch, sha]) => ({ full: `refs/heads/${branch}`, sha }))
    .filter((r) => r.full.startsWith(prefix) && (!args.query || r.full.slice(prefix.length).includes(args.query)))
    .sort((a, b) => (a.full < b.full ? -1 : a.full > b.full ? 1 : 0))
    .map(({ full, sha }) => refNode(ctx, repo, full.slice("refs/heads/".length), sha, prefix));
}

/** A branch as a `Ref`, named without `prefix`; its pull requests are those with it as their head. */
function refNode(ctx: GraphQLContext, repo: Repo, branch: string, sha: string, prefix: string): Node {
  const commit = repo.commits.get(sha);
  return {
    __typename: "Ref",
    name: `refs/heads/${branch}`.slice(prefix.length),
    prefix,
    target: { __typename: "Commit", oid: sha, committedDate: commit ? ts(commit.date) : null },
    associatedPullRequests: served([...PAGE, "states"], (a: Page & { states?: string[] | null }) =>
      connection(
        pullsOf(repo, { headRefName: branch, states: a.states ?? null }).map((pr) => pullNode(ctx, repo, pr)),
        a,
      ),
    ),
  };
}

/** `Repository.ref(qualifiedName)`: `refs/heads/<branch>` first, then the short name, as GitHub matches; else null. */
function refByName(ctx: GraphQLContext, repo: Repo, qualifiedName: string): Node | null {
  const branch = qualifiedName.startsWith("refs/heads/") ? qualifiedName.slice("refs/heads/".length) : qualifiedName;
  const sha = repo.branches.get(branch);
  return sha === undefined ? null : refNode(ctx, repo, branch, sha, "refs/heads/");
}

type PullRequestsArgs = Page & {
  states?: string[] | null;
  baseRefName?: string | null;
  headRefName?: string | null;
  orderBy?: { field: "CREATED_AT" | "UPDATED_AT" | "COMMENTS"; direction: "ASC" | "DESC" } | null;
};

/** `Repository.pullRequests`: filtered by state and refs, oldest first unless `orderBy` says otherwise. */
function pullsOf(repo: Repo, args: PullRequestsArgs): Pull[] {
  const stateOf = (pr: Pull) =>
    pr.merged ? "MERGED" : repo.issues.get(pr.number)!.state === "open" ? "OPEN" : "CLOSED";
  const at = (pr: Pull) => {
    const issue = repo.issues.get(pr.number)!;
    if (args.orderBy?.field === "COMMENTS")
      return [...repo.comments.values()].filter((c) => c.issueNumber === pr.number).length;
    return (args.orderBy?.field === "UPDATED_AT" ? issue.updatedAt : issue.createdAt).getTime();
  };
  const dir = args.orderBy?.direction === "DESC" ? -1 : 1;
  return [...repo.pulls.values()]
    .filter((pr) => !args.states || args.states.includes(stateOf(pr)))
    .filter((pr) => args.baseRefName == null || pr.baseRef === args.baseRefName)
    .filter((pr) => args.headRefName == null || pr.headRef === args.headRefName)
    .sort((a, b) => (args.orderBy ? (at(a) - at(b)) * dir : 0) || (a.number - b.number) * dir);
}

/** The query root: every operation is answered from it unless a test registered its own. */
export function githubRoot(ctx: GraphQLContext): Node {
  return {
    __typename: "Query",
    repository: served(["owner", "name"], ({ owner, name }: { owner?: string; name?: string }) => {
      const repo = ctx.state.findRepo(`${owner}/${name}`);
      if (!repo || (ctx.installationId !== null && repo.installationId !== ctx.installationId)) {
        throw new GraphQLFieldError("NOT_FOUND", `Could not resolve to a Repository with the name '${owner}/${name}'.`);
      }
      return repoNode(ctx, repo);
    }),
    // the one place GraphQL names the App's bot with its `[bot]` suffix
    viewer: { ...actor(ctx, ctx.state.botLogin), login: ctx.state.botLogin },
    rateLimit: {
      __typename: "RateLimit",
      limit: 5000,
      cost: 1,
      remaining: 4999,
      resetAt: ts(new Date(ctx.state.now().getTime() + 3600_000)),
      used: 1,
    },
  };
}

type IssuesArgs = Page & {
  labels?: string[] | null;
  states?: string[] | null;
  orderBy?: { field: "CREATED_AT" | "UPDATED_AT" | "COMMENTS"; direction: "ASC" | "DESC" } | null;
};

/**
 * `Repository.issues`: issues only (never pull requests), carrying any of
 * `labels` (names matched case-insensitively), in `states`; oldest first
 * unless `orderBy` says otherwise.
 */
function issuesOf(repo: Repo, args: IssuesArgs): Issue[] {
  const wanted = args.labels?.length ? new Set(args.labels.map((l) => l.toLowerCase())) : null;
  const at = (i: Issue) => {
    if (args.orderBy?.field === "COMMENTS")
      return [...repo.comments.values()].filter((c) => c.issueNumber === i.number).length;
    return (args.orderBy?.field === "UPDATED_AT" ? i.updatedAt : i.createdAt).getTime();
  };
  const dir = args.orderBy?.direction === "DESC" ? -1 : 1;
  return [...repo.issues.values()]
    .filter((i) => !i.isPull)
    .filter((i) => !args.states || args.states.includes(i.state === "open" ? "OPEN" : "CLOSED"))
    .filter((i) => !wanted || i.labels.some((l) => wanted.has(l.toLowerCase())))
    .sort((a, b) => (args.orderBy ? (at(a) - at(b)) * dir : 0) || (a.number - b.number) * dir);
}
