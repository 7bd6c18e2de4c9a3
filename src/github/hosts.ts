/**
 * The GitHub hosts Orchestra supports — api.github.com, GitHub Enterprise
 * Cloud, GitHub Enterprise Server from 3.17 — and what it does on a host
 * that lacks a feature it uses. Every REST route the App sends is checked
 * against each supported host's published description
 * (test/github/hosts.test.ts reads the routes from the source): a route a
 * supported host lacks must be named in HOST_GAPS, with its fallback, or the
 * test fails. The table is also the one docs/github-app.md shows.
 */

/** The oldest GitHub Enterprise Server release Orchestra supports. */
export const OLDEST_GHES = "3.17";

export type Feature = "issue-dependencies";

/** A feature some supported host lacks, and Orchestra's documented fallback there. */
export interface HostGap {
  feature: Feature;
  /** What it is, for people. */
  title: string;
  /** The GitHub Enterprise Server release that brought it; api.github.com and GHEC have it. */
  ghesSince: string;
  /** The REST routes behind it, `METHOD /template` as in GitHub's description. */
  routes: readonly string[];
  /** What Orchestra does on a host without it. */
  fallback: string;
}

export const HOST_GAPS: readonly HostGap[] = [
  {
    feature: "issue-dependencies",
    title: "issue dependencies",
    ghesSince: "3.19",
    routes: ["GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by"],
    fallback:
      "no dependency gate: a task's blockers are taken as read and empty, so queued tasks are claimable " +
      "(a `blocked by` link made on GitHub does not hold them)",
  },
];

/**
 * Routes the App sends that no adapter line names: Probot's installation
 * authentication mints a token before an installation's first call, and its
 * config plugin reads `.github/orchestra.yml` (and the org's `.github`
 * repository's) through the contents API.
 */
export const IMPLICIT_ROUTES: ReadonlyArray<{ route: string; by: string }> = [
  { route: "POST /app/installations/{installation_id}/access_tokens", by: "installation authentication" },
  { route: "GET /repos/{owner}/{repo}/contents/{path}", by: "octokit.config.get" },
];

/** `3.17.4` against `3.19`: negative, zero or positive, on the numbers each names (missing parts are 0). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(".").map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** A host as GET /meta describes it: GHES answers its `installed_version`; api.github.com and GHEC answer none. */
export interface HostVersion {
  /** null: api.github.com or GitHub Enterprise Cloud. */
  ghes: string | null;
}

/** The host in people's words. */
export function hostName(v: HostVersion): string {
  return v.ghes === null ? "api.github.com or GitHub Enterprise Cloud" : `GitHub Enterprise Server ${v.ghes}`;
}

/** Whether Orchestra supports the host (a GHES release older than OLDEST_GHES is not). */
export function supported(v: HostVersion): boolean {
  return v.ghes === null || compareVersions(v.ghes, OLDEST_GHES) >= 0;
}

/** The features this host lacks: none on api.github.com and GHEC, those newer than its release on GHES. */
export function gapsOf(v: HostVersion): HostGap[] {
  const ghes = v.ghes;
  return ghes === null ? [] : HOST_GAPS.filter((g) => compareVersions(ghes, g.ghesSince) < 0);
}

export function gapOf(feature: Feature): HostGap {
  return HOST_GAPS.find((g) => g.feature === feature)!;
}
