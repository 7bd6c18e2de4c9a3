/**
 * Who may fetch and push over HTTP, as GitHub decides it for an App's
 * installation tokens: HTTP Basic with the user `x-access-token` and the
 * token as password. A public repository can be fetched anonymously; a
 * private one, and any push, need a live token whose installation owns the
 * repository, which it was minted for (when narrowed to some repositories),
 * and whose permissions allow it (`contents: write` for a push).
 *
 * Refusals carry GitHub's wording as plain text, which git prints after
 * "remote:". Without usable credentials GitHub answers 401 (also for a
 * repository that does not exist: it does not say which); a repository the
 * token cannot see is "not found" (404), one it can see but not write is
 * "Permission ... denied" (403).
 */
import type { AccessToken, FakeState, Repo } from "../state.js";

export type GitService = "git-upload-pack" | "git-receive-pack";

export type GitAccess =
  { ok: true; token: AccessToken | null; actor: string } | { ok: false; status: 401 | 403 | 404; message: string };

const BAD_CREDENTIALS = "Invalid username or token. Password authentication is not supported for Git operations.";

/** The credentials of a Basic authorization header; null for none or another scheme. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const m = /^Basic\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m) return null;
  const text = Buffer.from(m[1]!, "base64").toString("utf8");
  const i = text.indexOf(":");
  return i < 0 ? { user: text, password: "" } : { user: text.slice(0, i), password: text.slice(i + 1) };
}

/** A token GitHub still accepts: known, not revoked, not expired (on the real clock, as REST checks it). */
export function liveToken(state: FakeState, value: string): AccessToken | null {
  const token = state.tokens.get(value);
  if (!token || token.revokedAt || token.validUntilMs <= Date.now()) return null;
  const inst = state.installations.get(token.installationId);
  return inst && !inst.suspendedAt ? token : null;
}

/** Whether the token's installation owns the repository and the token was minted for it. */
function reaches(token: AccessToken, repo: Repo): boolean {
  if (repo.installationId !== token.installationId) return false;
  return !token.repositories || token.repositories.includes(repo.fullName.toLowerCase());
}

export function authorizeGit(
  state: FakeState,
  repo: Repo | undefined,
  service: GitService,
  authorization: string | undefined,
): GitAccess {
  const push = service === "git-receive-pack";
  const creds = basicCredentials(authorization);
  if (authorization && !creds) return { ok: false, status: 401, message: BAD_CREDENTIALS };
  let token: AccessToken | null = null;
  if (creds) {
    token = creds.user === "x-access-token" ? liveToken(state, creds.password) : null;
    if (!token) return { ok: false, status: 401, message: BAD_CREDENTIALS };
  }
  if (!token) {
    if (repo && !repo.isPrivate && !push) return { ok: true, token: null, actor: "anonymous" };
    return { ok: false, status: 401, message: BAD_CREDENTIALS };
  }
  const actor = state.botLogin;
  const contents = token.permissions.contents;
  const canRead = repo && reaches(token, repo) && (contents === "read" || contents === "write");
  if (!repo || (repo.isPrivate && !canRead)) {
    return { ok: false, status: 404, message: "Repository not found." };
  }
  if (push && !(reaches(token, repo) && contents === "write")) {
    return { ok: false, status: 403, message: `Permission to ${repo.fullName}.git denied to ${actor}.` };
  }
  return { ok: true, token, actor };
}
