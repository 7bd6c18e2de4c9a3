/** What the credentials room reads and writes: the tokens handed to runs, and the run each belongs to. */
import type { Db } from "../store/db.js";
import type { RunCredential } from "../store/generated/sqlite/client.js";

export type CredentialState = "minting" | "held" | "revoked" | "expired" | "failed";

export interface CredentialRun {
  id: string;
  state: string;
  credentials: string | null;
  installationId: number;
  repo: string;
  /** The run still holds its task's lease. */
  holdsLease: boolean;
}

export interface CredentialsQueries {
  /** The run and its task's repository; null when there is no such run. */
  run(runId: string): Promise<CredentialRun | null>;
  insertMinting(c: { id: string; runId: string; installationId: number; repo: string; createdAt: Date }): Promise<void>;
  /** A minting row becomes held with its sealed token; false when it is no longer minting. */
  hold(id: string, sealed: string, expiresAt: Date): Promise<boolean>;
  /** Ends a row: its sealed token (if any) is dropped. */
  end(id: string, state: Exclude<CredentialState, "minting" | "held">, at: Date, note: string): Promise<void>;
  /** The run's rows that are still minting or held, oldest first. */
  open(runId: string): Promise<RunCredential[]>;
  /** Held tokens past their expiry, everywhere: their sealed tokens are dropped. */
  forgetExpired(now: Date): Promise<number>;
}

export function credentialsQueries(db: Db): CredentialsQueries {
  return {
    async run(runId) {
      const run = await db.run.findUnique({
        where: { id: runId },
        select: { id: true, state: true, credentials: true, taskId: true, leaseEpoch: true },
      });
      if (!run) return null;
      const task = await db.task.findUnique({
        where: { id: run.taskId },
        select: { installationId: true, repo: true, runId: true, leaseEpoch: true },
      });
      if (!task) return null;
      return {
        id: run.id,
        state: run.state,
        credentials: run.credentials,
        installationId: task.installationId,
        repo: task.repo,
        holdsLease: run.state === "live" && task.runId === run.id && task.leaseEpoch === run.leaseEpoch,
      };
    },
    async insertMinting(c) {
      await db.runCredential.create({ data: { ...c, state: "minting" } });
    },
    async hold(id, sealed, expiresAt) {
      const { count } = await db.runCredential.updateMany({
        where: { id, state: "minting" },
        data: { state: "held", sealed, expiresAt },
      });
      return count === 1;
    },
    async end(id, state, at, note) {
      await db.runCredential.update({
        where: { id },
        data: { state, sealed: null, note, ...(state === "revoked" ? { revokedAt: at } : {}) },
      });
    },
    open: (runId) =>
      db.runCredential.findMany({
        where: { runId, state: { in: ["minting", "held"] } },
        orderBy: { createdAt: "asc" },
      }),
    async forgetExpired(now) {
      const { count } = await db.runCredential.updateMany({
        where: { state: "held", expiresAt: { lte: now } },
        data: { state: "expired", sealed: null, note: "expired before its run's lease ended" },
      });
      return count;
    },
  };
}
