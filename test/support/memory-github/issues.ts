/**
 * The memory port's issues: issues, their labels, comments and reactions,
 * the issues blocking one, and the issues a label lists (with who labelled
 * them and their sub-issues).
 */
import { compareVersions, gapOf } from "../../../src/github/hosts.js";
import type { IssueLabel, IssuesPort, LabelledIssue } from "../../../src/github/port.js";
import { refusal } from "./failures.js";
import type { IssueRec, LabelEvent, RepoRec } from "./records.js";
import { commentInfo, issueInfo } from "./views.js";
import type { Memory } from "./writes.js";

/** The node ids the memory port names issues and labels by, as GitHub's GraphQL does. */
export const issueNodeId = (rec: RepoRec, issue: IssueRec): string => `I_${rec.fullName}#${issue.number}`;
export const labelNodeId = (rec: RepoRec, label: string): string => `LA_${rec.fullName}/${label.toLowerCase()}`;

export function issuesPort(m: Memory) {
  const { app, ghes, comments, call, repo, issueFor, openIssue, addLabelsTo, addComment, repos } = m;
  const labelsOf = (rec: RepoRec, i: IssueRec): IssueLabel[] =>
    i.labels.map((name) => ({ name, nodeId: labelNodeId(rec, name) }));
  const byNodeId = (id: string): [RepoRec, IssueRec] | null => {
    for (const rec of repos.values())
      for (const i of rec.issues.values()) if (!i.deleted && issueNodeId(rec, i) === id) return [rec, i];
    return null;
  };
  return {
    getIssue: (r, number) =>
      call("getIssue", [r, number], () => {
        const i = repo("getIssue", r).issues.get(number);
        return i && !i.deleted ? issueInfo(i) : null;
      }),
    createIssue: (r, issue) =>
      call("createIssue", [r, issue], () =>
        issueInfo(openIssue(repo("createIssue", r), { title: issue.title, body: issue.body, author: app }, false)),
      ),
    updateIssueBody: (r, number, body) =>
      call("updateIssueBody", [r, number, body], () => {
        const i = repo("updateIssueBody", r).issues.get(number);
        if (!i || i.deleted) return null;
        i.body = body;
        return issueInfo(i);
      }),
    issuesCreatedBy: (r, creator, opts = {}) =>
      call("issuesCreatedBy", [r, creator, opts], () => {
        const state = opts.state ?? "all";
        // Pages of GitHub's issue list hold pull requests too; the port drops them after.
        return [...repo("issuesCreatedBy", r).issues.values()]
          .filter((i) => !i.deleted && i.author === creator && (state === "all" || i.state === state))
          .sort((a, b) => b.number - a.number)
          .slice(0, (opts.pages ?? 5) * 100)
          .filter((i) => !i.isPullRequest)
          .map(issueInfo);
      }),
    issueLabels: (r, number) =>
      call("issueLabels", [r, number], () => {
        const rec = repo("issueLabels", r);
        const i = rec.issues.get(number);
        return i && !i.deleted ? labelsOf(rec, i) : null;
      }),
    addLabels: (r, number, labels) =>
      call("addLabels", [r, number, labels], () => {
        const rec = repo("addLabels", r);
        const issue = issueFor("addLabels", rec, number);
        addLabelsTo(rec, issue, labels, app, "Bot");
        return labelsOf(rec, issue);
      }),
    removeLabel: (r, number, label) =>
      call("removeLabel", [r, number, label], () => {
        // GitHub's 404 (no such label on the issue, or no issue) is success to the port.
        const rec = repo("removeLabel", r);
        const i = rec.issues.get(number);
        if (!i || i.deleted || !i.labels.some((l) => l.toLowerCase() === label.toLowerCase())) return null;
        i.labels = i.labels.filter((l) => l.toLowerCase() !== label.toLowerCase());
        return labelsOf(rec, i);
      }),
    findLabels: (r, names) =>
      call("findLabels", [r, names], () => {
        const rec = repo("findLabels", r);
        return names.flatMap((n) => {
          const name = rec.labels.get(n.toLowerCase());
          return name === undefined ? [] : [{ name, nodeId: labelNodeId(rec, name) }];
        });
      }),
    swapLabels: (swaps) =>
      call("swapLabels", [swaps], () =>
        swaps.map(({ issueId, add, remove }) => {
          const found = byNodeId(issueId);
          if (!found) return null;
          const [rec, issue] = found;
          // Every label the ids name, or null when one names none.
          const names = (ids: string[]): string[] | null => {
            const found = ids.map((id) => [...rec.labels.values()].find((l) => labelNodeId(rec, l) === id));
            return found.every((l): l is string => l !== undefined) ? found : null;
          };
          const adding = names(add);
          const removing = names(remove);
          // GitHub runs both halves and answers NOT_FOUND for a node it could not find: the other half is done.
          if (adding) addLabelsTo(rec, issue, adding, app, "Bot");
          if (removing)
            issue.labels = issue.labels.filter((l) => !removing.some((x) => x.toLowerCase() === l.toLowerCase()));
          return adding && removing ? labelsOf(rec, issue) : null;
        }),
      ),
    createComment: (r, number, body) =>
      call("createComment", [r, number, body], () => {
        const rec = repo("createComment", r);
        return commentInfo(addComment(rec, issueFor("createComment", rec, number), body, app));
      }),
    listComments: (r, number, opts = {}) =>
      call("listComments", [r, number, opts], () => {
        const rec = repo("listComments", r);
        issueFor("listComments", rec, number);
        const since = opts.since;
        // One page, oldest first, as the adapter asks for it.
        return [...comments.values()]
          .filter((c) => c.repo === rec.fullName && c.issue === number)
          .filter((c) => !since || c.createdAt.getTime() >= since.getTime())
          .slice(0, opts.perPage ?? 100)
          .map(commentInfo);
      }),
    addReaction: (r, commentId, content) =>
      call("addReaction", [r, commentId, content], () => {
        const rec = repo("addReaction", r);
        const c = comments.get(commentId);
        if (!c || c.repo !== rec.fullName) throw refusal("addReaction", 404, "Not Found");
        // The same reaction by the same user again is GitHub's 200 with the existing one.
        if (!c.reactions.some((x) => x.content === content && x.user === app)) c.reactions.push({ content, user: app });
      }),
    blockedBy: (r, issue) =>
      call("blockedBy", [r, issue], () => {
        const rec = repo("blockedBy", r);
        const found = issueFor("blockedBy", rec, issue);
        if (ghes && compareVersions(ghes, gapOf("issue-dependencies").ghesSince) < 0)
          throw refusal("blockedBy", 404, "Not Found");
        return found.blockedBy.map((b) => ({ ...b }));
      }),
    issuesLabelled: (r, labels) =>
      call("issuesLabelled", [r, labels], () => {
        const rec = repo("issuesLabelled", r);
        const wanted = new Set(labels.map((l) => l.toLowerCase()));
        return [...rec.issues.values()]
          .filter((i) => !i.deleted && !i.isPullRequest && i.labels.some((l) => wanted.has(l.toLowerCase())))
          .map((i): LabelledIssue => {
            // The query reads the last 20 labelling events; the last adder of each label asked for is kept.
            const last = new Map<string, LabelEvent>();
            for (const e of i.labelEvents.slice(-20))
              if (wanted.has(e.label.toLowerCase())) last.set(e.label.toLowerCase(), { ...e });
            return {
              number: i.number,
              state: i.state,
              isPullRequest: false,
              title: i.title,
              body: i.body,
              labels: [...i.labels],
              labelledBy: [...last.values()],
              subIssues: i.subIssues.slice(0, 50).map((s) => ({ ...s })),
              subIssuesTotal: i.subIssues.length,
            };
          });
      }),
  } satisfies IssuesPort;
}
