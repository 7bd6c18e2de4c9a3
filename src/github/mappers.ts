/**
 * GitHub's answers (REST items, GraphQL nodes) mapped to the port's domain
 * types. Pure functions: the adapter (octokit.ts) fetches, these translate.
 */
import {
  GitHubError,
  type BlockerInfo,
  type CheckRunInfo,
  type LabelledIssue,
  type PullInfo,
  type PullMergeability,
  type ReviewCommentInfo,
} from "./port.js";
import type { IssuesLabelledQuery, OpenPullNode } from "./queries.js";

export type RawPull = {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  merged?: boolean;
  merged_at?: string | null;
  merge_commit_sha?: string | null;
  head: { ref: string; sha: string; repo?: { full_name: string } | null };
  base: { ref: string };
  html_url: string;
  user?: { login: string } | null;
};

export function toPull(p: RawPull): PullInfo {
  const merged = p.merged ?? Boolean(p.merged_at);
  return {
    number: p.number,
    title: p.title,
    body: p.body ?? "",
    state: p.state === "open" ? "open" : "closed",
    merged,
    mergeCommitSha: merged ? (p.merge_commit_sha ?? null) : null,
    headRef: p.head.ref,
    headSha: p.head.sha,
    headRepo: p.head.repo?.full_name ?? null,
    baseRef: p.base.ref,
    url: p.html_url,
    author: p.user?.login ?? "",
  };
}

/** `…/repos/OWNER/REPO` (an issue's `repository_url`) → `OWNER/REPO`. */
const REPOSITORY_URL = /\/repos\/([^/]+)\/([^/]+)\/?$/;

export type RawBlocker = {
  number: number;
  state: string;
  repository_url: string;
  repository?: { full_name: string } | null;
};

export function toBlocker(i: RawBlocker): BlockerInfo {
  const m = REPOSITORY_URL.exec(i.repository_url);
  const repo = i.repository?.full_name ?? (m ? `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}` : null);
  if (!repo)
    throw new GitHubError(
      "list blocked-by dependencies",
      undefined,
      `blocker #${i.number} names no repository (${i.repository_url})`,
      false,
    );
  return { repo, number: i.number, state: i.state === "closed" ? "closed" : "open" };
}

const WORKFLOW_RUN = /\/actions\/runs\/(\d+)/;

export type RawCheckRun = {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion?: string | null;
  output: { title?: string | null; summary?: string | null; text?: string | null };
  check_suite?: { id: number } | null;
  details_url?: string | null;
  pull_requests?: ReadonlyArray<{ number: number }> | null;
};

export function toCheckRun(c: RawCheckRun): CheckRunInfo {
  return {
    id: c.id,
    name: c.name,
    headSha: c.head_sha,
    status: c.status,
    conclusion: c.conclusion ?? null,
    output: {
      title: c.output.title ?? undefined,
      summary: c.output.summary ?? undefined,
      text: c.output.text ?? undefined,
    },
    checkSuiteId: c.check_suite?.id ?? null,
    workflowRunId: Number(WORKFLOW_RUN.exec(c.details_url ?? "")?.[1]) || null,
    pullRequests: (c.pull_requests ?? []).map((p) => p.number),
  };
}

export type RawReviewComment = {
  path: string;
  line?: number | null;
  original_line?: number | null;
  body: string;
  user?: { login: string } | null;
};

/** An outdated comment has no `line` any more; its `original_line` still says where it was made. */
export function toReviewComment(c: RawReviewComment): ReviewCommentInfo {
  return { path: c.path, line: c.line ?? c.original_line ?? null, body: c.body, author: c.user?.login ?? "" };
}

export function toMergeability(n: OpenPullNode): PullMergeability {
  return {
    number: n.number,
    headRef: n.headRefName,
    headSha: n.headRefOid,
    headRepo: n.headRepository?.nameWithOwner ?? null,
    baseRef: n.baseRefName,
    baseSha: n.baseRefOid,
    isDraft: n.isDraft,
    mergeable: n.mergeable,
    mergeState: n.mergeStateStatus,
    reviewDecision: n.reviewDecision,
    checks: n.commits.nodes?.[0]?.commit.statusCheckRollup?.state ?? null,
  };
}

/** A job log's tail kept at most this long (characters), its end kept. */
export const LOG_TAIL_MAX_CHARS = 20_000;

/** The most of a job log read (its last bytes, by a range request): room for LOG_TAIL_MAX_CHARS of any UTF-8. */
export const LOG_TAIL_MAX_BYTES = 4 * LOG_TAIL_MAX_CHARS;

/**
 * The last `lines` lines of a log, trailing empty lines dropped first, and
 * at most LOG_TAIL_MAX_CHARS characters of them (the end kept).
 */
export function logTail(text: string, lines: number): string {
  const all = text.split(/\r?\n/);
  while (all.length && all[all.length - 1]!.trim() === "") all.pop();
  const tail = lines > 0 ? all.slice(-Math.floor(lines)).join("\n") : "";
  return tail.length > LOG_TAIL_MAX_CHARS ? tail.slice(-LOG_TAIL_MAX_CHARS) : tail;
}

type LabelledNode = NonNullable<NonNullable<NonNullable<IssuesLabelledQuery["repository"]>["issues"]["nodes"]>[number]>;

/** An issue from the reconcile query; `asked`: the labels whose last adder is kept. */
export function toLabelledIssue(n: LabelledNode, asked: string[]): LabelledIssue {
  const wanted = new Set(asked.map((l) => l.toLowerCase()));
  const labelledBy = new Map<string, LabelledIssue["labelledBy"][number]>();
  for (const e of n.timelineItems.nodes ?? []) {
    if (!e?.label || !e.actor || !wanted.has(e.label.name.toLowerCase())) continue;
    // GraphQL names a bot by its App slug; REST, webhooks and trust.bots say `<slug>[bot]`.
    const bot = e.actor.__typename === "Bot";
    const actor = bot && !e.actor.login.endsWith("[bot]") ? `${e.actor.login}[bot]` : e.actor.login;
    labelledBy.set(e.label.name.toLowerCase(), {
      label: e.label.name,
      actor,
      actorType: e.actor.__typename as LabelledIssue["labelledBy"][number]["actorType"],
      at: e.createdAt ?? "",
    });
  }
  return {
    number: n.number,
    state: n.state === "OPEN" ? "open" : "closed",
    isPullRequest: false,
    title: n.title,
    body: n.body,
    labels: (n.labels?.nodes ?? []).flatMap((l) => (l ? [l.name] : [])),
    labelledBy: [...labelledBy.values()],
    subIssues: (n.subIssues.nodes ?? []).flatMap((s) =>
      s
        ? [
            {
              repo: s.repository.nameWithOwner,
              number: s.number,
              state: s.state === "OPEN" ? ("open" as const) : ("closed" as const),
            },
          ]
        : [],
    ),
    subIssuesTotal: n.subIssues.totalCount,
  };
}
