/**
 * The body of GitHub's `push` webhook for one recorded push (git/host.ts),
 * in the shape of GitHub's example payloads: the repository, sender and
 * installation as the fake's serializers render them.
 */
import { installationRef } from "../../support/webhooks.js";
import { ts, type Serializer } from "../json.js";
import type { FakeState } from "../state.js";
import type { Push, PushedCommit } from "./host.js";

export function pushPayload(state: FakeState, json: Serializer, push: Push): Record<string, unknown> {
  const repo = state.repo(push.repo);
  const web = `${json.urls.web}/${repo.fullName}`;
  const commit = (c: PushedCommit): Record<string, unknown> => {
    const person = { name: c.name, email: c.email, username: c.author };
    return {
      id: c.sha,
      tree_id: c.tree,
      distinct: true,
      message: c.message,
      timestamp: ts(c.date),
      url: `${web}/commit/${c.sha}`,
      author: person,
      committer: person,
      added: c.added,
      removed: c.removed,
      modified: c.modified,
    };
  };
  const last = push.commits[push.commits.length - 1];
  const short = (sha: string) => sha.slice(0, 12);
  const compare = push.created
    ? `${web}/compare/${push.ref.replace(/^refs\/(heads|tags)\//, "")}`
    : `${web}/compare/${short(push.before)}...${short(push.after)}`;
  const pusher = state.user(push.pusher);
  const payload: Record<string, unknown> = {
    ref: push.ref,
    before: push.before,
    after: push.after,
    created: push.created,
    deleted: push.deleted,
    forced: push.forced,
    base_ref: null,
    compare,
    // GitHub lists at most 20 commits in a push's payload
    commits: push.commits.slice(-20).map(commit),
    head_commit: last ? commit(last) : null,
    repository: json.repo(repo),
    pusher: { name: pusher.login, email: null },
    sender: json.user(pusher.login),
  };
  if (push.installationId !== null) payload.installation = installationRef(push.installationId);
  return payload;
}
