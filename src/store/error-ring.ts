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
}

export const ERROR_RING_SIZE = 8;

/** Error messages are capped so one huge upstream body cannot bloat a row. */
const MAX_MESSAGE = 2000;

export function pushError(ring: readonly ErrorEntry[], entry: ErrorEntry, size = ERROR_RING_SIZE): ErrorEntry[] {
  const message = entry.message.length > MAX_MESSAGE ? `${entry.message.slice(0, MAX_MESSAGE)}…` : entry.message;
  const last = ring[ring.length - 1];
  if (last && last.class === entry.class && last.message === message) {
    return [...ring.slice(0, -1), { ...last, at: entry.at, count: (last.count ?? 1) + 1, firstAt: last.firstAt ?? last.at }];
  }
  return [...ring, { at: entry.at, class: entry.class, message }].slice(-size);
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
