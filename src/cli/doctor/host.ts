/**
 * `orchestra doctor`'s host check: which GitHub the App talks to (GET /meta,
 * read as an installation like the service reads it, or unauthenticated when
 * there is none), whether Orchestra supports it, and every feature it lacks
 * with the fallback Orchestra uses there (github/hosts.ts). A host with gaps
 * is a warning, not a failure: each gap has a documented fallback.
 */
import { compareVersions, gapsOf, hostName, OLDEST_GHES, supported } from "../../github/hosts.js";
import type { Check } from "./check.js";
import { githubProblem, installationOctokit, request, type AppTarget } from "./github.js";

const NAME = "github host";

export async function hostCheck(t: AppTarget, installationId: number | null): Promise<Check> {
  let installed: unknown;
  try {
    const { data } = await installationOctokit(t, installationId).request("GET /meta", request());
    installed = (data as { installed_version?: unknown }).installed_version;
  } catch (err) {
    const p = githubProblem(err, "GET /meta", t, {
      detail: "the host does not say its release",
      fix: "check GHE_HOST; then run orchestra doctor again",
    });
    // The service still works: it finds a missing feature from GitHub's own answers (docs/github-app.md).
    return { name: NAME, status: "warn", ...p };
  }
  const version = { ghes: typeof installed === "string" && installed ? installed : null };
  const host = hostName(version);
  if (!supported(version))
    return {
      name: NAME,
      status: "fail",
      detail: `${host} is older than GitHub Enterprise Server ${OLDEST_GHES}, the oldest Orchestra supports`,
      fix: `upgrade GitHub Enterprise Server to ${OLDEST_GHES} or later; then run orchestra doctor again`,
    };
  const gaps = gapsOf(version);
  if (gaps.length === 0) return { name: NAME, status: "ok", detail: `${host}: every feature Orchestra uses is there` };
  return {
    name: NAME,
    status: "warn",
    detail: [
      `${host} lacks ${gaps.map((g) => g.title).join(", ")}; Orchestra falls back:`,
      ...gaps.map((g) => `${g.title} (GHES ${g.ghesSince}): ${g.fallback}`),
    ].join("\n"),
    fix: `upgrade GitHub Enterprise Server to ${newest(gaps.map((g) => g.ghesSince))} or later to have them`,
  };
}

const newest = (versions: string[]): string => versions.sort(compareVersions).at(-1) ?? OLDEST_GHES;
