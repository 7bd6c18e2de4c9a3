/**
 * GitHub's issue dependencies ("blocked by" / "blocking") in the fake. Edges
 * join issues by their ids, which are unique across repositories (as on
 * GitHub, whose API names a blocker by id, not number), so a blocker may live
 * in another repository. Closing a blocker keeps the edge: the summary then
 * counts it in `total_blocked_by` but no longer in `blocked_by`.
 */
import type { Issue, Repo } from "./state.js";

/** An issue and the repository it lives in. */
export interface IssueAt {
  repo: Repo;
  issue: Issue;
}

/** `issue_dependencies_summary` as GitHub serves it on an issue. */
export interface DependencySummary {
  /** open issues this one is blocked by */
  blocked_by: number;
  /** open issues this one blocks */
  blocking: number;
  total_blocked_by: number;
  total_blocking: number;
}

export class Dependencies {
  /** blocked issue id → blocking issue ids, in the order they were added */
  private readonly edges = new Map<number, number[]>();

  constructor(private readonly repos: () => Iterable<Repo>) {}

  /** Records that `blocked` is blocked by `blocking`; false when it already was. */
  add(blocked: Issue, blocking: Issue): boolean {
    if (blocked.id === blocking.id) throw new Error("fake GitHub: an issue cannot block itself");
    const list = this.edges.get(blocked.id) ?? [];
    if (list.includes(blocking.id)) return false;
    list.push(blocking.id);
    this.edges.set(blocked.id, list);
    return true;
  }

  /** Removes the edge; false when there was none. */
  remove(blocked: Issue, blocking: Issue): boolean {
    const list = this.edges.get(blocked.id);
    const at = list?.indexOf(blocking.id) ?? -1;
    if (!list || at < 0) return false;
    list.splice(at, 1);
    return true;
  }

  /** The issues `blocked` is blocked by, oldest edge first, wherever they live. */
  blockersOf(blocked: Issue): IssueAt[] {
    return (this.edges.get(blocked.id) ?? []).map((id) => this.locate(id)).filter((x): x is IssueAt => x !== undefined);
  }

  /** The issues `blocking` blocks. */
  blockedIssuesOf(blocking: Issue): IssueAt[] {
    const out: IssueAt[] = [];
    for (const [blockedId, list] of this.edges) {
      if (!list.includes(blocking.id)) continue;
      const at = this.locate(blockedId);
      if (at) out.push(at);
    }
    return out;
  }

  summary(issue: Issue): DependencySummary {
    const blockers = this.blockersOf(issue);
    const blocked = this.blockedIssuesOf(issue);
    return {
      blocked_by: blockers.filter((b) => b.issue.state === "open").length,
      blocking: blocked.filter((b) => b.issue.state === "open").length,
      total_blocked_by: blockers.length,
      total_blocking: blocked.length,
    };
  }

  /** The issue with this id in any repository of the fake. */
  locate(id: number): IssueAt | undefined {
    for (const repo of this.repos()) {
      for (const issue of repo.issues.values()) if (issue.id === id) return { repo, issue };
    }
    return undefined;
  }
}
