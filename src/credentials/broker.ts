/**
 * The credential broker: a worker's run is handed a GitHub installation
 * token scoped to its task's one repository with only what a run needs
 * (RUN_TOKEN_PERMISSIONS), a fresh one in a heartbeat before the current one
 * expires, and every token it was handed is revoked when the lease ends
 * (the `revoke-credentials` effect; machine/credentials.ts records it).
 *
 * Minting is a call to GitHub the claim answer waits for: it writes nothing
 * a person sees, and the token is the answer. It happens after the claim has
 * committed, so a GitHub that will not mint never loses a claim: the answer
 * says `credentials: null` with `credentialsError`, and the next heartbeat
 * tries again (a worker that cannot work without a token releases the run).
 *
 * Each token is recorded before it is minted (`minting`), so a lease that
 * ends meanwhile finds it and its revocation waits for it; the token itself
 * is stored only sealed (seal.ts) and dropped once revoked or expired. A
 * token replaced by a renewal is left to expire (within the renewal window,
 * held by the same worker); it is revoked with the rest if the lease ends
 * first.
 */
import { randomUUID } from "node:crypto";
import { errorText } from "../github/errors.js";
import { GitHubError, repoRef, type GitHub, type InstallationTokens } from "../github/port.js";
import type { OutboxEffect } from "../effects/outbox.js";
import type { Performed } from "../effects/perform.js";
import type { CredentialsQueries } from "./queries.js";
import type { Sealer } from "./seal.js";

/** What a worker is handed: the token and when GitHub stops accepting it. */
export interface Credentials {
  token: string;
  expiresAt: string;
}

export interface CredentialsAnswer {
  /** null: none was handed (the repository's `credentials: none`, or GitHub would not mint; then see the error). */
  credentials: Credentials | null;
  /** Why no token came although the repository brokers them. */
  credentialsError?: string;
}

/** A heartbeat hands a fresh token when the current one expires sooner than this (GitHub's live for an hour). */
export const RENEW_BEFORE_MS = 15 * 60_000;
/** A token recorded as minting for longer than this was never minted (the call failed, or its process died). */
const MINTING_MS = 2 * 60_000;

export interface BrokerDeps {
  queries: CredentialsQueries;
  tokens: InstallationTokens;
  sealer: Sealer;
  clock: { now(): Date };
}

export class Broker {
  constructor(readonly deps: BrokerDeps) {}

  /**
   * For a claim answer, of a run the claim just made with `credentials:
   * broker`: a token (null and why when GitHub would not mint one).
   */
  async forClaim(run: { runId: string; installationId: number; repo: string }): Promise<CredentialsAnswer> {
    return this.#issue(run.runId, run);
  }

  /**
   * For a heartbeat answer: a fresh token when the newest one expires
   * within RENEW_BEFORE_MS, when the run has none yet (its claim's mint
   * failed), or when the worker asks (`renew`: it lost its token, say
   * to a replayed answer); else nothing (the worker keeps its token).
   */
  async forHeartbeat(runId: string, renew = false): Promise<Partial<CredentialsAnswer>> {
    const run = await this.deps.queries.run(runId);
    if (run?.credentials !== "broker" || !run.holdsLease) return {};
    const now = this.deps.clock.now().getTime();
    const open = await this.deps.queries.open(runId);
    if (open.some((c) => c.state === "minting" && now - c.createdAt.getTime() < MINTING_MS)) return {};
    const newest = open.filter((c) => c.state === "held").pop();
    if (!renew && newest?.expiresAt && newest.expiresAt.getTime() - now > RENEW_BEFORE_MS) return {};
    const issued = await this.#issue(runId, run);
    return issued.credentials ? issued : { credentialsError: issued.credentialsError! };
  }

  async #issue(runId: string, run: { installationId: number; repo: string }): Promise<CredentialsAnswer> {
    const { queries, tokens, sealer, clock } = this.deps;
    const id = randomUUID();
    await queries.insertMinting({
      id,
      runId,
      installationId: run.installationId,
      repo: run.repo,
      createdAt: clock.now(),
    });
    // Recorded first, then checked: a lease that ends from here on finds this row and revokes what it becomes.
    if (!(await queries.run(runId))?.holdsLease) {
      await queries.end(id, "failed", clock.now(), "not minted: the lease ended first");
      return { credentials: null, credentialsError: "the run's lease ended before a token was minted" };
    }
    let token;
    try {
      token = await tokens.mint(run.installationId, repoRef(run.repo));
    } catch (e) {
      const why = errorText(e);
      await queries.end(id, "failed", clock.now(), `not minted: ${why}`);
      return {
        credentials: null,
        credentialsError:
          `GitHub would not mint a token for ${run.repo}: ${why}; the next heartbeat asks again ` +
          "(a run that cannot start without one should be released)",
      };
    }
    if (!(await queries.hold(id, sealer.seal(token.token), token.expiresAt)))
      return { credentials: null, credentialsError: "the run's lease ended while its token was minted" };
    return { credentials: { token: token.token, expiresAt: token.expiresAt.toISOString() } };
  }

  /**
   * The `revoke-credentials` effect: every token handed to the run is
   * revoked on GitHub, as the token itself. One GitHub no longer accepts
   * (expired, revoked already) is done; one still being minted is waited
   * for (the effect is tried again); one whose seal cannot be opened (the
   * App's key changed) expires within the hour and is noted.
   */
  async revoke(effect: OutboxEffect, github: GitHub): Promise<Performed> {
    const { queries, sealer, clock } = this.deps;
    const runId = effect.runId;
    if (!runId) return { status: "dropped", note: "no run named" };
    // Tokens that expired unrevoked (a dry run records revocations without performing them) are forgotten too.
    await queries.forgetExpired(clock.now());
    const open = await queries.open(runId);
    const tally = { revoked: 0, unknown: 0, expired: 0, unopened: 0, abandoned: 0 };
    let minting = false;
    for (const c of open) {
      const now = clock.now();
      if (c.state === "minting") {
        if (now.getTime() - c.createdAt.getTime() < MINTING_MS) minting = true;
        else {
          await queries.end(c.id, "failed", now, "minting never finished");
          tally.abandoned++;
        }
        continue;
      }
      if (c.expiresAt && c.expiresAt <= now) {
        await queries.end(c.id, "expired", now, "expired before its run's lease ended");
        tally.expired++;
        continue;
      }
      const token = c.sealed ? sealer.open(c.sealed) : null;
      if (!token) {
        await queries.end(c.id, "expired", now, "its seal could not be opened (a new App key?); it expires on its own");
        tally.unopened++;
        continue;
      }
      const answer = await github.revokeToken(token);
      await queries.end(
        c.id,
        "revoked",
        clock.now(),
        answer === "revoked" ? "revoked when the lease ended" : "GitHub no longer accepted it",
      );
      tally[answer]++;
    }
    if (minting)
      throw new GitHubError(
        "revoke run tokens",
        undefined,
        "a token for this run is still being minted; it is revoked once minted",
        true,
      );
    return { status: "done", result: tally };
  }
}

/** What a replay of an answer that carried a token gets instead (a token is never stored in the clear). */
export function replayed<T extends Partial<CredentialsAnswer>>(answer: T): T {
  if (!answer.credentials) return answer;
  return {
    ...answer,
    credentials: null,
    credentialsError:
      "this is a replay (Idempotency-Key) of an answer that carried a token, which is not kept; " +
      "send renewCredentials: true with the next heartbeat to be handed a fresh one",
  };
}
