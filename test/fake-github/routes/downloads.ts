/**
 * Downloads GitHub hands out by redirect rather than serves under the API:
 * `actions/jobs/{id}/logs` answers 302 to a short-lived signed URL of a
 * plain-text log. The fake serves those URLs on its own host, outside
 * `/api/v3` and outside GitHub's REST description, without credentials (the
 * signature is the credential).
 */
import type { Reply } from "../http.js";
import type { FakeState, Repo } from "../state.js";

const JOB_LOG = /^\/_fake\/downloads\/job-logs\/([^/]+)\/([^/]+)\/(\d+)$/;

/** Where `actions/jobs/{id}/logs` redirects; the link lasts a minute, as GitHub's does. */
export function jobLogUrl(state: FakeState, web: string, repo: Repo, jobId: number): string {
  const expires = new Date(state.now().getTime() + 60_000).toISOString();
  return `${web}/_fake/downloads/job-logs/${repo.owner}/${repo.name}/${jobId}?expires=${encodeURIComponent(expires)}`;
}

/** The answer to a download URL, or null when `url` is not one. */
export function download(state: FakeState, method: string, url: URL): Reply | null {
  const m = JOB_LOG.exec(url.pathname);
  if (!m || method !== "GET") return null;
  const text = (status: number, body: string): Reply => ({
    status,
    raw: { contentType: "text/plain; charset=utf-8", text: body },
  });
  const expires = Date.parse(url.searchParams.get("expires") ?? "");
  if (!(expires >= state.now().getTime())) return text(403, "Signature expired");
  const repo = state.findRepo(`${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`);
  const log = repo?.jobLogs.get(Number(m[3]));
  return typeof log === "string" ? text(200, log) : text(404, "Not Found");
}
