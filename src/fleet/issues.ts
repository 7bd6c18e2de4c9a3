/**
 * The "Orchestra fleet" issue of a repository with `fleetIssue: true`: one
 * issue, found or created once and then edited, never one per change. The
 * fleet-issue effect is performed here. What the issue shows is read now
 * (snapshot.ts) and rendered (render.ts); an issue that already shows it is
 * not edited. Which issue it is, is stored (FleetIssue); a lost row costs a
 * listing of the App's own issues, where the hidden marker finds it again, so
 * it never leads to a second issue. A deleted or transferred issue (404 or
 * 410, or the webhook) is replaced by a new one; an issue a person closed is
 * left closed and not edited until it is reopened.
 */
import type { ConfigResult } from "../config/repo.js";
import { repoRef, type GitHub, type IssueInfo, type RepoRef } from "../github/port.js";
import type { OutboxEffect } from "../effects/outbox.js";
import type { Performed } from "../effects/perform.js";
import { readFleet } from "./snapshot.js";
import type { FleetQueries } from "./queries.js";
import { FLEET_TITLE, isFleetBody, renderFleet, showsSnapshot } from "./render.js";

export interface FleetIssuesDeps {
  queries: FleetQueries;
  configs: { get(installationId: number, repo: string): Promise<ConfigResult> };
  clock: { now(): Date };
  /**
   * The App's bot login (`<slug>[bot]`), the author of the fleet issue: it is looked for among that author's issues.
   */
  botLogin(): Promise<string>;
  /** Installations whose webhook deliveries are being recovered (a queued task's `deliveries` gate). */
  deliveriesWaiting?: () => Promise<Set<number>>;
}

const done = (result: unknown, note?: string): Performed => ({ status: "done", result, ...(note ? { note } : {}) });
const dropped = (note: string): Performed => ({ status: "dropped", note });

export class FleetIssues {
  constructor(readonly deps: FleetIssuesDeps) {}

  /** The fleet issue's number as stored; null when none is known. */
  async numberOf(repo: string): Promise<number | null> {
    return (await this.deps.queries.storedIssue(repo))?.number ?? null;
  }

  /** Whether an issue is the repository's fleet issue: its body carries the marker, or it is the stored one. */
  async isFleetIssue(repo: string, issue: number, body?: string | null): Promise<boolean> {
    return isFleetBody(body) || (await this.numberOf(repo)) === issue;
  }

  async #remember(repo: string, installationId: number, number: number, written: boolean): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.queries.rememberIssue({
      repo,
      installationId,
      number,
      ...(written ? { writtenAt: now } : {}),
      updatedAt: now,
    });
  }

  /** Forgets the stored number when it is `issue` (deleted or transferred away); true when it was. */
  async forget(repo: string, issue: number): Promise<boolean> {
    return (await this.deps.queries.forgetIssue(repo, issue, this.deps.clock.now())) > 0;
  }

  /**
   * The issue as GitHub shows it now: the stored one, unless it is gone;
   * else the App's newest issue carrying the marker (an open one first);
   * else null (one is to be created).
   */
  async #current(r: RepoRef, e: OutboxEffect, github: GitHub): Promise<IssueInfo | null> {
    const stored = await this.numberOf(e.repo);
    if (stored !== null) {
      const issue = await github.getIssue(r, stored);
      // A transferred issue answers from its new place, under another number.
      if (issue && issue.number === stored && !issue.isPullRequest) return issue;
      await this.forget(e.repo, stored);
    }
    const ours = (await github.issuesCreatedBy(r, await this.deps.botLogin())).filter((i) => isFleetBody(i.body));
    const found = ours.find((i) => i.state === "open") ?? ours[0] ?? null;
    if (found) await this.#remember(e.repo, e.installationId, found.number, false);
    return found;
  }

  /**
   * Performs a fleet-issue effect: brings the issue up to date
   * with one write at most (none when it already shows this).
   */
  async perform(e: OutboxEffect, github: GitHub): Promise<Performed> {
    const cfg = await this.deps.configs.get(e.installationId, e.repo);
    if (!cfg.ok)
      return dropped("not updated: .github/orchestra.yml is invalid; the fleet issue follows again once it is fixed");
    if (!cfg.config.fleetIssue)
      return dropped("not updated: fleetIssue is off in .github/orchestra.yml (the issue, if any, is left as it is)");
    const now = this.deps.clock.now();
    const snapshot = await readFleet(this.deps.queries, e.repo, now, await this.deps.deliveriesWaiting?.());
    const r = repoRef(e.repo);
    const issue = await this.#current(r, e, github);
    if (issue?.state === "closed")
      return done(
        { issue: issue.number, edited: false },
        `not updated: #${issue.number} was closed; reopen it to have it kept current`,
      );
    if (issue && showsSnapshot(issue.body, snapshot))
      return done({ issue: issue.number, edited: false }, `#${issue.number} already shows this`);
    const body = renderFleet(snapshot, now);
    if (issue) {
      const edited = await github.updateIssueBody(r, issue.number, body);
      if (edited) {
        await this.#remember(e.repo, e.installationId, issue.number, true);
        return done({ issue: issue.number, edited: true });
      }
      // Deleted between the read and the edit.
      await this.forget(e.repo, issue.number);
    }
    const created = await github.createIssue(r, { title: FLEET_TITLE, body });
    await this.#remember(e.repo, e.installationId, created.number, true);
    return done({ issue: created.number, created: true });
  }
}
