/**
 * `issue_dependencies` deliveries ("blocked by" added or removed).
 * @octokit/webhooks-examples has no example for this event, so a payload is
 * assembled from the real `issues.opened` example (the one with an
 * organization): its issue, repository, organization and sender, shaped like
 * `webhook-issue-dependencies-blocked-by-added` / `-removed` in GitHub's
 * description. The payload describes the state after the change, as GitHub
 * sends it: after `blocked_by_added` the issues' dependency summaries count
 * the new edge.
 */
import type { EmitterWebhookEvent } from "@octokit/webhooks";
import type { FakeGitHub } from "../fake-github/index.js";
import { deepMerge, installationRef, listExamples, type DeepPartial, type Payload } from "./webhooks.js";

export type BlockedByAction = "blocked_by_added" | "blocked_by_removed";

export type IssueDependenciesPayload<A extends BlockedByAction = BlockedByAction> =
  EmitterWebhookEvent<`issue_dependencies.${A}`>["payload"];

/** Deep-merged over the defaults; `blocked_issue_id` / `blocking_issue_id` follow the issues' ids unless given. */
export type IssueDependenciesOverrides<A extends BlockedByAction = BlockedByAction> = DeepPartial<
  IssueDependenciesPayload<A>
>;

type Json = Record<string, unknown>;

function issuesOpenedExample(): Payload {
  const example = listExamples("issues", "opened").find((e) => e.organization);
  if (!example) throw new Error('no "issues.opened" example with an organization');
  return structuredClone(example);
}

/** The example issue as issue `number` (id and URLs follow). */
function renumbered(issue: Json, number: number, id: number): Json {
  const from = new RegExp(`/issues/${String(issue.number)}(?=$|[/{#?])`);
  const out: Json = {};
  for (const [k, v] of Object.entries(issue))
    out[k] = typeof v === "string" && k.endsWith("url") ? v.replace(from, `/issues/${number}`) : v;
  return {
    ...out,
    number,
    id,
    node_id: Buffer.from(`05:Issue${id}`).toString("base64"),
    title: `Blocking issue ${number}`,
  };
}

function summary(blockedBy: number, totalBlockedBy: number, blocking: number, totalBlocking: number): Json {
  return { blocked_by: blockedBy, blocking, total_blocked_by: totalBlockedBy, total_blocking: totalBlocking };
}

/**
 * An `issue_dependencies` payload for `action`: issue #1 of the example's
 * repository blocked by (or no longer blocked by) issue #2 of the same
 * repository, installation 1, unless `overrides` say otherwise.
 */
export function issueDependenciesPayload<A extends BlockedByAction>(
  action: A,
  overrides?: IssueDependenciesOverrides<A>,
): IssueDependenciesPayload<A> {
  const o = (overrides ?? {}) as Json;
  const example = issuesOpenedExample();
  const exampleIssue = example.issue as Json;
  let blocked = deepMerge(exampleIssue, o.blocked_issue as Json | undefined);
  let blocking = deepMerge(
    renumbered(exampleIssue, Number(blocked.number) + 1, Number(blocked.id) + 1),
    o.blocking_issue as Json | undefined,
  );
  // the edge itself, after the change; other edges only when overridden
  const linked = action === "blocked_by_added" ? 1 : 0;
  const open = (i: Json) => (i.state === "closed" ? 0 : 1);
  blocked = deepMerge(
    { ...blocked, issue_dependencies_summary: summary(linked * open(blocking), linked, 0, 0) },
    o.blocked_issue as Json | undefined,
  );
  blocking = deepMerge(
    { ...blocking, issue_dependencies_summary: summary(0, 0, linked * open(blocked), linked) },
    o.blocking_issue as Json | undefined,
  );
  const repository = deepMerge(example.repository as Json, o.repository as Json | undefined);
  const inst = o.installation as { id?: unknown } | undefined;
  const payload: Json = {
    action,
    blocked_issue_id: blocked.id,
    blocked_issue: blocked,
    blocking_issue_id: blocking.id,
    blocking_issue: blocking,
    blocking_issue_repo: deepMerge(repository, o.blocking_issue_repo as Json | undefined),
    installation: installationRef(typeof inst?.id === "number" ? inst.id : 1),
    organization: deepMerge(example.organization as Json, o.organization as Json | undefined),
    repository,
    sender: deepMerge(example.sender as Json, o.sender as Json | undefined),
  };
  if (typeof o.blocked_issue_id === "number") payload.blocked_issue_id = o.blocked_issue_id;
  if (typeof o.blocking_issue_id === "number") payload.blocking_issue_id = o.blocking_issue_id;
  return payload as unknown as IssueDependenciesPayload<A>;
}

/** `organization-simple-webhooks` for an account of the fake. */
function organization(fake: FakeGitHub, login: string): Json {
  const user = fake.json.user(login);
  const api = `${fake.json.urls.api}/orgs/${encodeURIComponent(String(user.login))}`;
  return {
    login: user.login,
    id: user.id,
    node_id: user.node_id,
    url: api,
    repos_url: `${api}/repos`,
    events_url: `${api}/events`,
    hooks_url: `${api}/hooks`,
    issues_url: `${api}/issues`,
    members_url: `${api}/members{/member}`,
    public_members_url: `${api}/public_members{/member}`,
    avatar_url: user.avatar_url,
    description: null,
  };
}

/**
 * A payload that agrees with the fake's state, like `fakeWebhookPayload`:
 * both issues, both repositories, the sender and the installation are
 * rendered by the fake's serializers (whole objects, no example leftovers).
 * Change the state first (`fake.state.block` / `unblock`), then build the
 * delivery that reports it. The organization is the owner's when it is one;
 * a user-owned repository's delivery has none, as on GitHub.
 */
export function fakeIssueDependenciesPayload<A extends BlockedByAction>(
  fake: FakeGitHub,
  action: A,
  refs: { repo: string; issue: number; blockerRepo?: string; blocker: number; sender?: string },
  overrides?: IssueDependenciesOverrides<A>,
): IssueDependenciesPayload<A> {
  const repo = fake.state.repo(refs.repo);
  const blockerRepo = fake.state.repo(refs.blockerRepo ?? refs.repo);
  const blocked = fake.json.issue(repo, fake.state.issue(repo.fullName, refs.issue));
  const blocking = fake.json.issue(blockerRepo, fake.state.issue(blockerRepo.fullName, refs.blocker));
  const payload = issueDependenciesPayload(action) as unknown as Json;
  const replace: Json = {
    blocked_issue_id: blocked.id,
    blocked_issue: blocked,
    blocking_issue_id: blocking.id,
    blocking_issue: blocking,
    blocking_issue_repo: fake.json.repo(blockerRepo),
    installation: installationRef(repo.installationId ?? 1),
    repository: fake.json.repo(repo),
    sender: fake.json.user(refs.sender ?? repo.owner),
  };
  for (const [k, v] of Object.entries(replace)) payload[k] = v;
  const owner = fake.state.users.get(repo.owner.toLowerCase());
  if (owner?.type === "Organization") payload.organization = organization(fake, repo.owner);
  else delete payload.organization;
  return deepMerge(payload, (overrides ?? {}) as Json) as unknown as IssueDependenciesPayload<A>;
}
