/**
 * The writes the port and the test's seeding helpers share: labels added,
 * issues and pull requests opened, comments made, commits on a branch, a
 * branch deleted, a repository added. Built on the shared context; `Memory`
 * is the two together, what each area of the port is made from.
 */
import type { MemoryContext } from "./context.js";
import { resolve } from "./context.js";
import type {
  IssueRec,
  IssueSeed,
  LabelEvent,
  PullRec,
  PullSeed,
  RepoRec,
  RepoSeed,
  StoredComment,
} from "./records.js";
import { WEB } from "./records.js";

export type MemoryWrites = ReturnType<typeof memoryWrites>;
export type Memory = MemoryContext & MemoryWrites;

export function memoryWrites(ctx: MemoryContext) {
  const { now, repos, comments, newId, newCommit } = ctx;

  function repoLabel(rec: RepoRec, label: string): string {
    const known = rec.labels.get(label.toLowerCase());
    if (known) return known;
    rec.labels.set(label.toLowerCase(), label);
    return label;
  }
  function addLabelsTo(
    rec: RepoRec,
    issue: IssueRec,
    labels: string[],
    actor: string,
    actorType: LabelEvent["actorType"],
  ) {
    for (const l of labels) {
      const name = repoLabel(rec, l);
      if (issue.labels.some((x) => x.toLowerCase() === name.toLowerCase())) continue;
      issue.labels.push(name);
      issue.labelEvents.push({ label: name, actor, actorType, at: now().toISOString() });
    }
  }
  function openIssue(rec: RepoRec, seed: IssueSeed, isPullRequest: boolean): IssueRec {
    const number = seed.number ?? rec.nextNumber;
    if (rec.issues.has(number)) throw new Error(`memoryGitHub: #${number} is already in ${rec.fullName}`);
    rec.nextNumber = Math.max(rec.nextNumber, number + 1);
    const author = seed.author ?? "octocat";
    const issue: IssueRec = {
      number,
      title: seed.title ?? `Issue ${number}`,
      body: seed.body ?? "",
      state: seed.state ?? "open",
      author,
      isPullRequest,
      deleted: false,
      labels: [],
      labelEvents: [],
      blockedBy: [...(seed.blockedBy ?? [])],
      subIssues: [...(seed.subIssues ?? [])],
    };
    rec.issues.set(number, issue);
    addLabelsTo(
      rec,
      issue,
      seed.labels ?? [],
      seed.labelledBy?.actor ?? author,
      seed.labelledBy?.actorType ?? ((seed.labelledBy?.actor ?? author).endsWith("[bot]") ? "Bot" : "User"),
    );
    return issue;
  }
  function addComment(rec: RepoRec, issue: IssueRec, body: string, author: string, at = now()): StoredComment {
    const id = newId();
    const c: StoredComment = {
      id,
      repo: rec.fullName,
      issue: issue.number,
      body,
      author,
      url: `${WEB}/${rec.fullName}/issues/${issue.number}#issuecomment-${id}`,
      createdAt: at,
      reactions: [],
    };
    comments.set(id, c);
    return c;
  }
  /** Moves a branch to a new commit; its open pull requests follow their head. */
  function commitOn(rec: RepoRec, branch: string, opts: { sha?: string; from?: string } = {}): string {
    const parent = rec.branches.get(branch) ?? resolve(rec, opts.from ?? rec.defaultBranch);
    if (!parent) throw new Error(`memoryGitHub.commit: no branch or commit ${opts.from} in ${rec.fullName}`);
    const sha = newCommit(rec, [parent], opts.sha);
    rec.branches.set(branch, sha);
    for (const p of rec.pulls.values())
      if (p.headRef === branch && p.headRepo === rec.fullName && rec.issues.get(p.number)?.state === "open")
        p.headSha = sha;
    return sha;
  }
  function openPull(rec: RepoRec, seed: PullSeed, author: string): PullRec {
    const base = seed.base ?? rec.defaultBranch;
    const baseSha = rec.branches.get(base);
    if (!baseSha) throw new Error(`memoryGitHub.addPull: no base branch ${base} in ${rec.fullName}`);
    const headRepo = seed.headRepo ?? rec.fullName;
    const headSha =
      headRepo !== rec.fullName
        ? newCommit(rec, [baseSha])
        : (rec.branches.get(seed.head) ?? commitOn(rec, seed.head, { from: base }));
    const issue = openIssue(
      rec,
      { title: seed.title ?? `Pull ${seed.head}`, body: seed.body ?? "", author, labels: seed.labels ?? [] },
      true,
    );
    const pull: PullRec = {
      number: issue.number,
      headRef: seed.head,
      headSha,
      headRepo,
      baseRef: base,
      merged: false,
      mergeCommitSha: null,
      isDraft: seed.draft ?? false,
      mergeable: seed.mergeable ?? "MERGEABLE",
      reviewDecision: seed.reviewDecision ?? null,
      closes: [...(seed.closes ?? [])],
    };
    rec.pulls.set(pull.number, pull);
    return pull;
  }
  function deleteBranchOf(rec: RepoRec, branch: string): void {
    rec.branches.delete(branch);
    // GitHub closes the open pull requests whose head branch is deleted.
    for (const p of rec.pulls.values()) {
      const issue = rec.issues.get(p.number)!;
      if (p.headRef === branch && p.headRepo === rec.fullName && issue.state === "open") issue.state = "closed";
    }
  }
  function addRepo(name: string, seed: RepoSeed = {}): void {
    if (!/^[^/\s]+\/[^/\s]+$/.test(name)) throw new Error(`memoryGitHub.addRepo: ${name} is not owner/repo`);
    if (repos.has(name)) throw new Error(`memoryGitHub.addRepo: ${name} is already in the fake`);
    const rec: RepoRec = {
      fullName: name,
      defaultBranch: seed.defaultBranch ?? "main",
      deletesMergedBranches: seed.deletesMergedBranches ?? false,
      installed: seed.installed ?? true,
      commits: new Map(),
      branches: new Map(),
      issues: new Map(),
      pulls: new Map(),
      nextNumber: 1,
      labels: new Map(),
      checkRuns: new Map(),
      appSuites: new Map(),
      suites: new Set(),
      workflows: new Map(),
      workflowRuns: new Map(),
      logs: new Map(),
      reviews: new Map(),
      permissions: new Map(Object.entries(seed.permissions ?? {})),
      configs: new Map(Object.entries(seed.configs ?? {})),
      rerequested: [],
    };
    repos.set(name, rec);
    rec.branches.set(rec.defaultBranch, newCommit(rec, []));
    for (const b of seed.branches ?? []) rec.branches.set(b, rec.branches.get(rec.defaultBranch)!);
    for (const [file, w] of Object.entries(seed.workflows ?? {}))
      rec.workflows.set(file, {
        runName: w.runName ?? file.replace(/\.ya?ml$/, ""),
        dispatchable: w.dispatchable ?? true,
        returnsRunId: w.returnsRunId ?? true,
      });
    for (const i of seed.issues ?? []) openIssue(rec, i, false);
    for (const p of seed.pulls ?? []) openPull(rec, p, p.author ?? "octocat");
  }

  return { addLabelsTo, openIssue, addComment, commitOn, openPull, deleteBranchOf, addRepo };
}
