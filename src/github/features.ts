/**
 * What the GitHub host this service talks to lacks, found out once and then
 * known: a feature a supported host does not have (hosts.ts, HOST_GAPS)
 * degrades to its documented fallback and is said once — one log line, and
 * the report that `/ready`'s detail and the dashboard show — instead of
 * holding tasks forever on a call that can never succeed.
 *
 * Evidence is positive only. The host's release (GET /meta's
 * `installed_version`) is read first, once it answers; a GHES release older
 * than the one that brought a feature lacks it. Where the release could not
 * be read, GitHub's 404 on the dependencies route counts only for an issue
 * that GitHub, asked right then, shows exists. A 5xx, a timeout or any other
 * failure is never read as "not on this host": it is thrown, as before, and
 * the next read asks again.
 */
import type { Logger } from "pino";
import { gapOf, gapsOf, hostName, type Feature, type HostGap, type HostVersion } from "./hosts.js";
import { GitHubError, type BlockerInfo, type GitHub, type RepoRef } from "./port.js";

/** A feature found missing, with how it was found and when. */
export interface FoundGap extends HostGap {
  evidence: string;
  since: Date;
}

export interface HostReport {
  /** The host's release as GET /meta answered it; null until it has answered. */
  version: HostVersion | null;
  /** "GitHub Enterprise Server 3.17.4", or "not read yet". */
  host: string;
  gaps: FoundGap[];
}

/** What a read of an issue's blockers found: the blockers, or the host has no issue dependencies. */
export type BlockersRead = { blockers: BlockerInfo[] } | { unsupported: FoundGap };

export type HostGitHub = Pick<GitHub, "blockedBy" | "getIssue" | "hostVersion">;

export class HostFeatures {
  #version: HostVersion | null = null;
  readonly #gaps = new Map<Feature, FoundGap>();

  constructor(private readonly deps: { log: Logger; clock: { now(): Date } }) {}

  report(): HostReport {
    return {
      version: this.#version,
      host: this.#version ? hostName(this.#version) : "not read yet",
      gaps: [...this.#gaps.values()],
    };
  }

  /** The host's release: read once it answers; a failure leaves it unknown, to be asked again next time. */
  async version(github: Pick<GitHub, "hostVersion">): Promise<HostVersion | null> {
    if (this.#version) return this.#version;
    try {
      this.#version = await github.hostVersion();
    } catch (err) {
      this.deps.log.debug({ err: String(err) }, "GitHub did not say its release (GET /meta); asked again next time");
      return null;
    }
    for (const gap of gapsOf(this.#version))
      this.#found(gap.feature, `${hostName(this.#version)} (GET /meta): it came in GHES ${gap.ghesSince}`);
    return this.#version;
  }

  /** The issue's blockers, or the documented fallback on a host without issue dependencies. */
  async blockedBy(github: HostGitHub, r: RepoRef, issue: number): Promise<BlockersRead> {
    const known = this.#gaps.get("issue-dependencies");
    if (known) return { unsupported: known };
    const version = await this.version(github);
    const lacking = this.#gaps.get("issue-dependencies");
    if (lacking) return { unsupported: lacking };
    try {
      return { blockers: await github.blockedBy(r, issue) };
    } catch (err) {
      // A release that has the route answering 404 is no evidence it lacks it: only an unknown release is asked.
      if (version !== null || !(err instanceof GitHubError) || err.status !== 404) throw err;
      const exists = await github.getIssue(r, issue);
      if (!exists) throw err; // the issue is gone: GitHub's 404 says that, nothing about the host
      const route = gapOf("issue-dependencies").routes[0]!;
      return {
        unsupported: this.#found(
          "issue-dependencies",
          `${route} answered 404 for ${r.owner}/${r.repo}#${issue}, which exists (the host's release is not known)`,
        ),
      };
    }
  }

  #found(feature: Feature, evidence: string): FoundGap {
    const known = this.#gaps.get(feature);
    if (known) return known;
    const gap: FoundGap = { ...gapOf(feature), evidence, since: this.deps.clock.now() };
    this.#gaps.set(feature, gap);
    this.deps.log.warn(
      { feature, host: this.report().host, evidence, fallback: gap.fallback },
      `GitHub host lacks ${gap.title}: ${gap.fallback}`,
    );
    return gap;
  }
}
