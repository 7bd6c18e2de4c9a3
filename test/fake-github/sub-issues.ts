/**
 * GitHub's sub-issues in the fake: a parent issue and its children, in the
 * order they were added. Like dependencies (see dependencies.ts), edges join
 * issues by id, so a sub-issue may live in another repository. As on GitHub,
 * an issue has at most one parent, a parent at most 100 sub-issues, pull
 * requests take no part, and the hierarchy has no cycles. Closing a
 * sub-issue keeps it in the list.
 */
import type { IssueAt } from "./dependencies.js";
import type { Issue, Repo } from "./state.js";

/** GitHub's limit of sub-issues under one parent. */
export const MAX_SUB_ISSUES = 100;

export class SubIssues {
  /** parent issue id → sub-issue ids, in the order they were added */
  private readonly children = new Map<number, number[]>();
  /** sub-issue id → its parent's id */
  private readonly parents = new Map<number, number>();

  constructor(private readonly repos: () => Iterable<Repo>) {}

  /** Makes `child` a sub-issue of `parent`; false when it already was. */
  add(parent: Issue, child: Issue): boolean {
    if (parent.isPull || child.isPull) throw new Error("fake GitHub: pull requests cannot be sub-issues or have them");
    if (parent.id === child.id) throw new Error("fake GitHub: an issue cannot be its own sub-issue");
    const current = this.parents.get(child.id);
    if (current === parent.id) return false;
    if (current !== undefined)
      throw new Error("fake GitHub: that issue is already a sub-issue of another issue (one parent only)");
    for (let up: number | undefined = parent.id; up !== undefined; up = this.parents.get(up)) {
      if (up === child.id) throw new Error("fake GitHub: a sub-issue cannot be an ancestor of its parent");
    }
    const list = this.children.get(parent.id) ?? [];
    if (list.length >= MAX_SUB_ISSUES)
      throw new Error(`fake GitHub: an issue has at most ${MAX_SUB_ISSUES} sub-issues`);
    list.push(child.id);
    this.children.set(parent.id, list);
    this.parents.set(child.id, parent.id);
    return true;
  }

  /** Removes `child` from `parent`'s sub-issues; false when it was not one. */
  remove(parent: Issue, child: Issue): boolean {
    const list = this.children.get(parent.id);
    const at = list?.indexOf(child.id) ?? -1;
    if (!list || at < 0) return false;
    list.splice(at, 1);
    this.parents.delete(child.id);
    return true;
  }

  /** The sub-issues of `parent`, open or closed, in the order they were added, wherever they live. */
  childrenOf(parent: Issue): IssueAt[] {
    return (this.children.get(parent.id) ?? [])
      .map((id) => this.locate(id))
      .filter((x): x is IssueAt => x !== undefined);
  }

  /** The issue `child` is a sub-issue of, if any. */
  parentOf(child: Issue): IssueAt | undefined {
    const id = this.parents.get(child.id);
    return id === undefined ? undefined : this.locate(id);
  }

  private locate(id: number): IssueAt | undefined {
    for (const repo of this.repos()) {
      for (const issue of repo.issues.values()) if (issue.id === id) return { repo, issue };
    }
    return undefined;
  }
}
