/** Git refs, commits and branches, as GitHub's REST API (and its webhooks' head_commit) shapes them. */
import type { Commit, Repo } from "../state.js";
import { nodeId, ts, type Json } from "./core.js";
import { IssueJson } from "./issues.js";

export class GitJson extends IssueJson {
  gitRef(r: Repo, fullRef: string, sha: string): Json {
    const short = fullRef.replace(/^refs\//, "");
    return {
      ref: fullRef,
      node_id: nodeId("REF", `${r.id}:${fullRef}`),
      url: `${this.urls.api}/repos/${r.fullName}/git/refs/${short}`,
      object: { sha, type: "commit", url: `${this.urls.api}/repos/${r.fullName}/git/commits/${sha}` },
    };
  }

  commit(r: Repo, c: Commit): Json {
    const api = `${this.urls.api}/repos/${r.fullName}`;
    const person = { name: c.author, email: `${c.author}@users.noreply.github.com`, date: ts(c.date) };
    return {
      url: `${api}/commits/${c.sha}`,
      sha: c.sha,
      node_id: nodeId("C", c.sha),
      html_url: `${this.urls.web}/${r.fullName}/commit/${c.sha}`,
      comments_url: `${api}/commits/${c.sha}/comments`,
      commit: {
        url: `${api}/git/commits/${c.sha}`,
        author: person,
        committer: person,
        message: c.message,
        comment_count: 0,
        tree: { sha: c.tree, url: `${api}/git/trees/${c.tree}` },
        verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
      },
      author: this.user(c.author),
      committer: this.user(c.author),
      parents: c.parents.map((p) => ({
        sha: p,
        url: `${api}/commits/${p}`,
        html_url: `${this.urls.web}/${r.fullName}/commit/${p}`,
      })),
    };
  }

  branch(r: Repo, name: string, sha: string): Json {
    const api = `${this.urls.api}/repos/${r.fullName}/branches/${name}`;
    return {
      name,
      commit: this.commit(r, r.commits.get(sha)!),
      _links: { self: api, html: `${this.urls.web}/${r.fullName}/tree/${name}` },
      protected: false,
      protection: { enabled: false, required_status_checks: { enforcement_level: "off", contexts: [], checks: [] } },
      protection_url: `${api}/protection`,
    };
  }

  simpleCommit(c: Commit): Json {
    const person = { name: c.author, email: `${c.author}@users.noreply.github.com` };
    return { id: c.sha, tree_id: c.tree, message: c.message, timestamp: ts(c.date), author: person, committer: person };
  }
}
