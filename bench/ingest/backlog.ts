// Orchestra's inbox seen from outside while it runs: how many deliveries are
// still open (pending or processing) and how many it has finished with, read
// from its database on a connection of the bench's own. As in verify.ts, all
// this relies on is the contract that each delivery is a row of "Delivery"
// with a "state".
import Database from "better-sqlite3";
import pg from "pg";
import { sleep } from "./targets.js";
import { sqlitePath } from "./verify.js";

export interface InboxCounts {
  /** pending + processing: the backlog. */
  open: number;
  /** done + ignored + parked: finished with, whether processed or stored as ignored at ingest. */
  closed: number;
}

export interface InboxReader {
  counts(): Promise<InboxCounts>;
  close(): Promise<void>;
}

const OPEN = new Set(["pending", "processing"]);

function tally(rows: { state: string; n: number | string }[]): InboxCounts {
  const c = { open: 0, closed: 0 };
  for (const r of rows) c[OPEN.has(r.state) ? "open" : "closed"] += Number(r.n);
  return c;
}

const QUERY = `SELECT "state" AS state, count(*) AS n FROM "Delivery" GROUP BY "state"`;

/**
 * A reader of the live database. On PostgreSQL the rows a previous run left
 * are counted at the start and taken off `closed` (open ones cannot be told
 * apart and stay in `open`; session.ts warns about them).
 */
export async function inboxReader(databaseUrl: string): Promise<InboxReader> {
  if (!databaseUrl.startsWith("postgres")) {
    // Read-write like verify.ts (a read-only handle cannot use the WAL index
    // the service keeps), but this connection only ever reads.
    const db = new Database(sqlitePath(databaseUrl), { fileMustExist: true });
    const statement = db.prepare(QUERY);
    return {
      counts: async () => tally(statement.all() as { state: string; n: number }[]),
      close: async () => void db.close(),
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  const read = async (): Promise<InboxCounts> => tally((await client.query(QUERY)).rows);
  const before = await read();
  return {
    counts: async () => {
      const now = await read();
      return { open: now.open, closed: now.closed - before.closed };
    },
    close: () => client.end(),
  };
}

export interface BacklogSample {
  /** Seconds since the watch began. */
  atS: number;
  open: number;
  closed: number;
}

/**
 * Samples the inbox every `everyMs` for `seconds`, or until the backlog is
 * empty when `untilEmpty`; nothing is being sent meanwhile, so every delivery
 * that leaves the backlog was drained by the service.
 */
export async function watchBacklog(
  reader: InboxReader,
  o: { seconds: number; everyMs: number; untilEmpty: boolean; onSample?: (s: BacklogSample) => void },
): Promise<BacklogSample[]> {
  const start = Date.now();
  const samples: BacklogSample[] = [];
  for (;;) {
    const c = await reader.counts();
    const s = { atS: (Date.now() - start) / 1000, ...c };
    samples.push(s);
    o.onSample?.(s);
    if ((o.untilEmpty && s.open === 0) || s.atS >= o.seconds) return samples;
    await sleep(Math.min(o.everyMs, Math.max(0, o.seconds * 1000 - (Date.now() - start))));
  }
}

export interface DrainSpan {
  /** The backlog at the span's start and end. */
  fromOpen: number;
  toOpen: number;
  seconds: number;
  /** Deliveries drained per second over the span. */
  perS: number;
}

/**
 * The drain rate over the samples, split into at most `spans` stretches of
 * about equal backlog drained, so that rates at different backlog lengths
 * sit side by side. Samples after the backlog first reached 0 say nothing
 * about the rate (the service was idle) and are left out.
 */
export function drainSpans(samples: BacklogSample[], spans: number): DrainSpan[] {
  const emptyAt = samples.findIndex((s) => s.open === 0);
  const used = emptyAt >= 0 ? samples.slice(0, emptyAt + 1) : samples;
  if (used.length < 2) return [];
  const first = used[0]!;
  const last = used[used.length - 1]!;
  const total = first.open - last.open;
  if (total <= 0) {
    const seconds = last.atS - first.atS;
    return seconds > 0 ? [{ fromOpen: first.open, toOpen: last.open, seconds, perS: total / seconds }] : [];
  }
  const out: DrainSpan[] = [];
  let from = first;
  for (let i = 1; i < used.length; i++) {
    const s = used[i]!;
    const due = first.open - (total * (out.length + 1)) / spans;
    if (s.open <= due || i === used.length - 1) {
      const seconds = s.atS - from.atS;
      if (seconds > 0) out.push({ fromOpen: from.open, toOpen: s.open, seconds, perS: (from.open - s.open) / seconds });
      from = s;
    }
  }
  return out;
}
