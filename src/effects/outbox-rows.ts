/** An effect row as the outbox reads it (effects/outbox.ts), and as the operator API lists it. */
import type { ErrorEntry } from "../store/error-ring.js";
import { parseRing } from "../store/error-ring.js";
import type { EffectKind, EffectSpec } from "../machine/effects.js";
import type { Effect } from "../store/generated/sqlite/client.js";

export type EffectState = "pending" | "running" | "done" | "dropped" | "dry-run" | "parked";
export const EFFECT_STATES: readonly EffectState[] = ["pending", "running", "done", "dropped", "dry-run", "parked"];

export interface OutboxEffect {
  seq: number;
  id: string;
  key: string;
  kind: EffectKind;
  spec: EffectSpec;
  taskId: string | null;
  runId: string | null;
  installationId: number;
  repo: string;
  /** Attempts so far, this one included. */
  attempts: number;
  maybeSent: boolean;
  dryRun: boolean;
  createdAt: Date;
  errors: ErrorEntry[];
  /** Effects sharing it are interchangeable: the newest does what the older would (machine/effects.ts). */
  coalesceKey: string | null;
  /** Its lane's rank (machine/effects.ts, LANES). */
  lane: number;
  /** Set at the claim: another effect of its lane was due behind it in its installation. */
  laneBusy?: boolean;
}

export interface EffectSummary {
  id: string;
  task: string | null;
  run: string | null;
  repo: string;
  kind: string;
  key: string;
  state: string;
  attempts: number;
  dryRun: boolean;
  payload: unknown;
  result: unknown;
  note: string | null;
  errors: ErrorEntry[];
  createdAt: Date;
  doneAt: Date | null;
  nextAttemptAt: Date;
}

export function parsed(row: Effect): OutboxEffect {
  const payload = JSON.parse(row.payload) as EffectSpec["payload"];
  return {
    seq: row.seq,
    id: row.id,
    key: row.key,
    kind: row.kind as EffectKind,
    spec: { kind: row.kind, key: row.key, payload, ...(row.runId ? { runId: row.runId } : {}) } as EffectSpec,
    taskId: row.taskId,
    runId: row.runId,
    installationId: row.installationId,
    repo: row.repo,
    attempts: row.attempts,
    maybeSent: row.maybeSent,
    dryRun: row.dryRun,
    createdAt: row.createdAt,
    errors: parseRing(row.errors),
    coalesceKey: row.coalesceKey,
    lane: row.lane,
  };
}

/** The issue an effect row acts on (`repo#number`), if it names one. */
export function issueOf(row: Effect): string | null {
  const issue = (JSON.parse(row.payload) as { issue?: unknown }).issue;
  return typeof issue === "number" ? `${row.repo}#${issue}` : null;
}

export function summary(row: Effect): EffectSummary {
  return {
    id: row.id,
    task: row.taskId,
    run: row.runId,
    repo: row.repo,
    kind: row.kind,
    key: row.key,
    state: row.state,
    attempts: row.attempts,
    dryRun: row.dryRun,
    payload: JSON.parse(row.payload) as unknown,
    result: row.result ? (JSON.parse(row.result) as unknown) : null,
    note: row.note,
    errors: parseRing(row.errors),
    createdAt: row.createdAt,
    doneAt: row.doneAt,
    nextAttemptAt: row.nextAttemptAt,
  };
}
