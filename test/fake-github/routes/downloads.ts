/**
 * Downloads GitHub hands out by redirect rather than serves under the API:
 * `actions/jobs/{id}/logs` answers 302 to a short-lived signed URL of a
 * plain-text log. The fake serves those URLs on its own host, outside
 * `/api/v3` and outside GitHub's REST description, without credentials (the
 * signature is the credential). Like the storage behind them, they answer
 * a `Range: bytes=…` request with 206 and just those bytes.
 */
import type { Reply } from "../http.js";
import type { FakeState, Repo } from "../state.js";

const JOB_LOG = /^\/_fake\/downloads\/job-logs\/([^/]+)\/([^/]+)\/(\d+)$/;

/** Where `actions/jobs/{id}/logs` redirects; the link lasts a minute, as GitHub's does. */
export function jobLogUrl(state: FakeState, web: string, repo: Repo, jobId: number): string {
  const expires = new Date(state.now().getTime() + 60_000).toISOString();
  return `${web}/_fake/downloads/job-logs/${repo.owner}/${repo.name}/${jobId}?expires=${encodeURIComponent(expires)}`;
}

/** The answer to a download URL, or null when `url` is not one; `range`: the request's Range header. */
export function download(state: FakeState, method: string, url: URL, range?: string): Reply | null {
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
  if (typeof log !== "string") return text(404, "Not Found");
  return range === undefined ? text(200, log) : ranged(Buffer.from(log, "utf8"), range);
}

/** One byte range (RFC 9110 §14): `bytes=a-b`, `bytes=a-` or the last n, `bytes=-n`; anything else is ignored. */
function ranged(bytes: Buffer, range: string): Reply {
  const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  const whole: Reply = { status: 200, raw: { contentType: "text/plain; charset=utf-8", text: bytes } };
  if (!m || (m[1] === "" && m[2] === "")) return whole;
  const size = bytes.length;
  const [start, end] =
    m[1] === ""
      ? [Math.max(0, size - Number(m[2])), size - 1]
      : [Number(m[1]), Math.min(size - 1, Number(m[2] || size - 1))];
  if (start >= size || start > end || (m[1] === "" && Number(m[2]) === 0))
    return {
      status: 416,
      headers: { "content-range": `bytes */${size}` },
      raw: { contentType: "text/plain", text: "" },
    };
  return {
    status: 206,
    headers: { "content-range": `bytes ${start}-${end}/${size}` },
    raw: { contentType: "text/plain; charset=utf-8", text: bytes.subarray(start, end + 1) },
  };
}
