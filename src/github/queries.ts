/**
 * The adapter's GraphQL operations and the shapes of their answers. Every
 * field and argument here is checked against GitHub's published schema
 * (@octokit/graphql-schema) by the fake GitHub the tests run against.
 */
import { MAX_SWAPS } from "./port-issues.js";

/** Open pull requests into a base, oldest first, 100 a page. */
export const OPEN_PULLS_INTO = `query OpenPullRequestsInto($owner: String!, $repo: String!, $base: String!,\
 $cursor: String) {
  repository(owner: $owner, name: $repo) {
    pullRequests(states: OPEN, baseRefName: $base, first: 100, after: $cursor,\
 orderBy: {field: CREATED_AT, direction: ASC}) {
      nodes {
        number headRefName headRefOid headRepository { nameWithOwner } baseRefName baseRefOid
        isDraft mergeable mergeStateStatus reviewDecision
        commits(last: 1) { nodes { commit { statusCheckRollup { state } } } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export interface OpenPullNode {
  number: number;
  headRefName: string;
  headRefOid: string;
  /** null when the head's fork was deleted */
  headRepository: { nameWithOwner: string } | null;
  baseRefName: string;
  baseRefOid: string;
  isDraft: boolean;
  mergeable: "MERGEABLE" | "CONFLICTING" | "UNKNOWN";
  mergeStateStatus: string;
  reviewDecision: "APPROVED" | "CHANGES_REQUESTED" | "REVIEW_REQUIRED" | null;
  commits: { nodes: Array<{ commit: { statusCheckRollup: { state: string } | null } } | null> | null };
}

export interface OpenPullsIntoQuery {
  repository: {
    pullRequests: {
      nodes: Array<OpenPullNode | null> | null;
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  } | null;
}

export const ISSUES_LABELLED = `query IssuesLabelled($owner: String!, $repo: String!, $labels: [String!],\
 $cursor: String) {
  repository(owner: $owner, name: $repo) {
    issues(labels: $labels, states: [OPEN, CLOSED], first: 100, after: $cursor,\
 orderBy: {field: CREATED_AT, direction: ASC}) {
      nodes {
        number state title body
        labels(first: 20) { nodes { name } }
        timelineItems(itemTypes: [LABELED_EVENT], last: 20) { nodes { ... on LabeledEvent\
 { createdAt label { name } actor { __typename login } } } }
        subIssues(first: 50) { totalCount nodes { number state repository { nameWithOwner } } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export interface IssuesLabelledQuery {
  repository: {
    issues: {
      nodes: Array<{
        number: number;
        state: "OPEN" | "CLOSED";
        title: string;
        body: string;
        labels: { nodes: Array<{ name: string } | null> | null } | null;
        timelineItems: {
          nodes: Array<{
            createdAt?: string;
            label?: { name: string } | null;
            actor?: { __typename: string; login: string } | null;
          } | null> | null;
        };
        subIssues: {
          totalCount: number;
          nodes: Array<{
            number: number;
            state: "OPEN" | "CLOSED";
            repository: { nameWithOwner: string };
          } | null> | null;
        };
      } | null> | null;
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  } | null;
}

/** Branches by name: the filter narrows on GitHub's side, the caller keeps exact prefix matches. */
export const BRANCHES = `query Branches($owner: String!, $repo: String!, $filter: String, $cursor: String) {
  repository(owner: $owner, name: $repo) {
    refs(refPrefix: "refs/heads/", query: $filter, first: 100, after: $cursor) {
      nodes {
        name
        target { oid ... on Commit { committedDate } }
        associatedPullRequests(states: [OPEN, CLOSED, MERGED], first: 1) { totalCount }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export interface BranchesQuery {
  repository: {
    refs: {
      nodes: Array<{
        name: string;
        target: { oid: string; committedDate?: string | null } | null;
        associatedPullRequests: { totalCount: number };
      } | null> | null;
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    } | null;
  } | null;
}

/**
 * What deleting a merged pull request's branch needs, in one query: whether the repository deletes merged
 * branches itself, the branch's head, and an open pull request from it.
 */
export const MERGED_BRANCH = `query MergedBranch($owner: String!, $repo: String!, $ref: String!) {
  repository(owner: $owner, name: $repo) {
    deleteBranchOnMerge
    ref(qualifiedName: $ref) {
      target { oid }
      associatedPullRequests(states: [OPEN], first: 1) { nodes { number } }
    }
  }
}`;

export interface MergedBranchQuery {
  repository: {
    deleteBranchOnMerge: boolean;
    ref: {
      target: { oid: string } | null;
      associatedPullRequests: { nodes: Array<{ number: number } | null> | null };
    } | null;
  } | null;
}

/**
 * Label swaps on `n` issues in one request: for each, labels added and then others taken off. Mutations in one
 * document run in order, so the label that tells who owns an issue is on before the one it replaces comes off;
 * the second of each pair answers that issue's labels after both. GitHub runs every field it can: a node that
 * is not there fails its own field (NOT_FOUND, by its alias in `path`), not the others.
 */
export function swapLabelsDocument(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SWAPS) throw new RangeError(`1 to ${MAX_SWAPS} swaps, not ${n}`);
  const each = Array.from({ length: n }, (_, i) => i);
  const vars = each.map((i) => `$issue${i}: ID!, $add${i}: [ID!]!, $remove${i}: [ID!]!`).join(", ");
  const fields = each.map(
    (i) => `  added${i}: addLabelsToLabelable(input: {labelableId: $issue${i}, labelIds: $add${i}}) { clientMutationId }
  removed${i}: removeLabelsFromLabelable(input: {labelableId: $issue${i}, labelIds: $remove${i}}) {
    labelable { labels(first: 100) { totalCount nodes { id name } } }
  }`,
  );
  return `mutation SwapLabels(${vars}) {\n${fields.join("\n")}\n}`;
}

/** Keyed by alias: `added<i>` and `removed<i>` for swap i. */
export type SwapLabelsMutation = Record<
  string,
  {
    labelable?: {
      labels: { totalCount: number; nodes: Array<{ id: string; name: string } | null> | null } | null;
    } | null;
  } | null
>;
