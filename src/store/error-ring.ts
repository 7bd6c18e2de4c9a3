/**
 * A bounded ring of recent errors, newest last. One error slot that the next
 * error overwrites hides the cause of a failure behind its symptoms; a ring
 * keeps the sequence. A repeat of the newest entry is counted rather than
 * appended, so an error that recurs every few seconds cannot push out the
 * entries that explain it.
 */
export interface ErrorEntry {
  at: string;
  class: string;
  message: string;
  /** How many times in a row this error was seen; `at` is the latest. */
  count?: number;
  firstAt?: string;
  /**
   * Start of the failure window the entry belongs to (effects, whose row has no column for it; see retry/schedule.ts).
   */
  windowFrom?: string;
}

export const ERROR_RING_SIZE = 8;

/** Error messages are capped so one huge upstream body cannot bloat a row. */
const MAX_MESSAGE = 2000;

export function pushError(ring: readonly ErrorEntry[], entry: ErrorEntry, size = ERROR_RING_SIZE): ErrorEntry[] {
  const message = entry.message.length > MAX_MESSAGE ? `${entry.message.slice(0, MAX_MESSAGE)}…` : entry.message;
  const last = ring[ring.length - 1];
  if (last && last.class === entry.class && last.message === message) {
    const window = entry.windowFrom ? { windowFrom: entry.windowFrom } : {};
    return [
      ...ring.slice(0, -1),
      { ...last, at: entry.at, count: (last.count ?? 1) + 1, firstAt: last.firstAt ?? last.at, ...window },
    ];
  }
  return [
    ...ring,
    { at: entry.at, class: entry.class, message, ...(entry.windowFrom ? { windowFrom: entry.windowFrom } : {}) },
  ].slice(-size);
}

export function parseRing(text: string | null | undefined): ErrorEntry[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? (v as ErrorEntry[]) : [];
  } catch {
    return [];
  }
}

/** The start of the failure window recorded in a ring: the newest entry's that has one. */
export function windowFromOf(ring: readonly ErrorEntry[]): Date | null {
  for (let i = ring.length - 1; i >= 0; i--) {
    const w = ring[i]!.windowFrom;
    if (w) {
      const d = new Date(w);
      return Number.isNaN(d.getTime()) ? null : d;
    }
  }
  return null;
}
