/** Issues, their labels, comments and reactions, as GitHub's REST API shapes them. */
import type { Comment, Issue, Label, Reaction, Repo } from "../state.js";
import { nodeId, SerializerCore, ts, type Json } from "./core.js";

export class IssueJson extends SerializerCore {
  label(r: Repo, l: Label): Json {
    return {
      id: l.id,
      node_id: nodeId("LA", l.id),
      url: `${this.urls.api}/repos/${r.fullName}/labels/${encodeURIComponent(l.name)}`,
      name: l.name,
      color: l.color,
      default: l.default,
      description: l.description,
    };
  }

  issueLabels(r: Repo, i: Issue): Json[] {
    return i.labels
      .map((n) => r.labels.get(n.toLowerCase()))
      .filter((l): l is Label => !!l)
      .map((l) => this.label(r, l));
  }

  issue(r: Repo, i: Issue): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/issues/${i.number}`;
    const pr = r.pulls.get(i.number);
    const out: Json = {
      id: i.id,
      node_id: nodeId(i.isPull ? "PR" : "I", i.id),
      url: api,
      repository_url: `${this.urls.api}/repos/${r.fullName}`,
      labels_url: `${api}/labels{/name}`,
      comments_url: `${api}/comments`,
      events_url: `${api}/events`,
      html_url: `${this.urls.web}/${r.fullName}/${i.isPull ? "pull" : "issues"}/${i.number}`,
      number: i.number,
      state: i.state,
      state_reason: i.stateReason,
      title: i.title,
      body: i.body,
      user: this.user(i.user),
      labels: this.issueLabels(r, i),
      assignee: i.assignees[0] ? this.user(i.assignees[0]) : null,
      assignees: i.assignees.map((a) => this.user(a)),
      milestone: null,
      locked: i.locked,
      active_lock_reason: null,
      comments: [...r.comments.values()].filter((c) => c.issueNumber === i.number).length,
      closed_at: ts(i.closedAt),
      created_at: ts(i.createdAt),
      updated_at: ts(i.updatedAt),
      closed_by: i.closedBy ? this.user(i.closedBy) : null,
      author_association: this.association(r, i.user),
      type: null,
      reactions: this.reactionRollup(
        `${api}/reactions`,
        r.reactions.filter((x) => x.subject.kind === "issue" && x.subject.number === i.number),
      ),
      timeline_url: `${api}/timeline`,
      performed_via_github_app: null,
    };
    // dependencies join issues only; pull requests carry no summary, nor does anything on a host without them
    if (!i.isPull && this.state.host.dependencies) out.issue_dependencies_summary = this.state.dependencies.summary(i);
    if (pr) {
      out.draft = pr.draft;
      out.pull_request = {
        url: `${this.urls.api}/repos/${r.fullName}/pulls/${i.number}`,
        html_url: `${this.urls.web}/${r.fullName}/pull/${i.number}`,
        diff_url: `${this.urls.web}/${r.fullName}/pull/${i.number}.diff`,
        patch_url: `${this.urls.web}/${r.fullName}/pull/${i.number}.patch`,
        merged_at: ts(pr.mergedAt),
      };
    }
    return out;
  }

  comment(r: Repo, c: Comment): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/issues/comments/${c.id}`;
    return {
      id: c.id,
      node_id: nodeId("IC", c.id),
      url: api,
      html_url: `${this.urls.web}/${r.fullName}/issues/${c.issueNumber}#issuecomment-${c.id}`,
      body: c.body,
      user: this.user(c.user),
      created_at: ts(c.createdAt),
      updated_at: ts(c.updatedAt),
      issue_url: `${this.urls.api}/repos/${r.fullName}/issues/${c.issueNumber}`,
      author_association: this.association(r, c.user),
      performed_via_github_app: c.viaApp ? this.app() : null,
      reactions: this.reactionRollup(
        `${api}/reactions`,
        r.reactions.filter((x) => x.subject.kind === "comment" && x.subject.id === c.id),
      ),
    };
  }

  reaction(x: Reaction): Json {
    return {
      id: x.id,
      node_id: nodeId("REA", x.id),
      user: this.user(x.user),
      content: x.content,
      created_at: ts(x.createdAt),
    };
  }

  private reactionRollup(url: string, list: Reaction[]): Json {
    const count = (c: string): number => list.filter((x) => x.content === c).length;
    return {
      url,
      total_count: list.length,
      "+1": count("+1"),
      "-1": count("-1"),
      laugh: count("laugh"),
      hooray: count("hooray"),
      confused: count("confused"),
      heart: count("heart"),
      rocket: count("rocket"),
      eyes: count("eyes"),
    };
  }
}
