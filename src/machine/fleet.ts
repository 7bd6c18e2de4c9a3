/**
 * The fleet issue's debounce, decided in the machine. A change that the
 * repository's "Orchestra fleet" issue shows records one `fleet-issue`
 * effect keyed by the repository and the debounce window the change falls
 * in, due just after the window ends. The outbox keeps one row per key, so a
 * burst of changes in a window is one pending effect and at most one edit;
 * what the issue shows is read when the effect is performed, so the edit
 * shows the state after the burst, never a state from inside it.
 */
import type { TaskPatch, RunPatch } from "./decision.js";
import type { EffectSpec } from "./effects.js";
import type { State, TaskState } from "./model.js";
import { DEFAULT_FLEET_DEBOUNCE_MS } from "../config/defaults.js";

/**
 * The effect is due this long after its window ends, so that a change
 * decided just before the end has committed when the issue is rendered.
 */
export const FLEET_SETTLE_MS = 2_000;

export interface FleetWindow {
  start: Date;
  end: Date;
}

/**
 * The window `now` falls in: windows of `windowMs` (at least a
 * second) from the Unix epoch, start included, end excluded.
 */
export function fleetWindow(now: Date, windowMs: number): FleetWindow {
  const ms = Math.max(1_000, Math.floor(windowMs));
  const start = Math.floor(now.getTime() / ms) * ms;
  return { start: new Date(start), end: new Date(start + ms) };
}

/** The one fleet-issue effect of a repository's window: same repository and window, same key. */
export function fleetEffect(repo: string, now: Date, windowMs: number = DEFAULT_FLEET_DEBOUNCE_MS): EffectSpec {
  const w = fleetWindow(now, windowMs);
  return {
    kind: "fleet-issue",
    key: `fleet-issue:${repo}:${w.start.toISOString()}`,
    payload: { repo },
    at: new Date(w.end.getTime() + FLEET_SETTLE_MS),
    repoWide: true,
    // An earlier window's edit still waiting when this one comes due adds nothing (src/effects/lanes.ts).
    coalesce: `fleet-issue:${repo}`,
  };
}

/**
 * Task fields the fleet issue shows, directly or through the queue's order
 * and a queued task's gate. A renewed lease (leaseExpiresAt alone), usage and
 * progress are not among them: heartbeats do not edit the issue. `blockersAt`
 * counts only between unread and read (the blockers-unread gate), not each
 * time the sweep reads the blockers again.
 */
const SHOWN = [
  "title",
  "attempt",
  "priority",
  "queuedAt",
  "prNumber",
  "runId",
  "workerId",
  "backoffUntil",
  "diagnostic",
  "blockedBy",
  "blockersAt",
] as const;
type Shown = (typeof SHOWN)[number];

function differs(key: Shown, before: unknown, after: unknown): boolean {
  if (key === "blockersAt") return (before === null) !== (after === null);
  if (before instanceof Date || after instanceof Date)
    return !(before instanceof Date && after instanceof Date && before.getTime() === after.getTime());
  return JSON.stringify(before ?? null) !== JSON.stringify(after ?? null);
}

/**
 * Whether a transition changes what the fleet issue shows: a new task,
 * another state, a shown field that takes another value, or a run's class.
 * `current` is the task as read (null: no task yet).
 */
export function fleetShows(
  current: (Partial<Record<Shown, unknown>> & { state: State }) | null,
  to: TaskState,
  task: TaskPatch,
  run?: Pick<RunPatch, "class">,
): boolean {
  if (!current || current.state !== to) return true;
  if (SHOWN.some((k) => task[k] !== undefined && differs(k, current[k], task[k]))) return true;
  return run?.class !== undefined;
}
