// The database stopped while GitHub keeps sending: deliveries go out at a fixed rate, as GitHub sends them
// whatever the service answers; a few seconds in, the bench's own PostgreSQL server (pgcluster.ts) is stopped for
// `downSeconds` and started again, and the deliveries go on for a while after. What the service acknowledged
// must be stored; what it refused (503) must come back from GitHub's delivery log through the missed-deliveries
// sweep, with no operator; the service must come back by itself. If its process exits, it is started again as
// a supervisor would, and the exit is counted.
import { withPg } from "../claims/world.js";
import type { Exit } from "../../demo/children.js";
import { sleep } from "../ingest/targets.js";
import { buildDeliveries, checkIssues, converge, prng, writesOf, type Item } from "./deliveries.js";
import type { PgCluster } from "./pgcluster.js";
import type { FaultWorld } from "./world.js";

export interface DbDownOptions {
  issues: number;
  /** Deliveries per second, before, during and after the outage. */
  rate: number;
  downSeconds: number;
  stopMode: "fast" | "immediate";
  seed: number;
  timeoutMs: number;
}

export interface DbDownResult {
  stopMode: "fast" | "immediate";
  rate: number;
  /** From the stop's end to the start's beginning (ms). */
  downMs: number;
  sent: number;
  /** Answered 2xx the first time GitHub sent them. */
  answered2xx: number;
  answered503: number;
  /** First answers other than 2xx and 503, by status (0: no answer). */
  answeredOther: Record<string, number>;
  /** Deliveries answered 2xx (on any attempt) and not stored at the end: must be 0. */
  ackedLost: number;
  /** Deliveries sent that are stored at the end: must equal `sent`. */
  stored: number;
  /** Refused the first time, stored at the end by a redelivery the service asked GitHub for. */
  recoveredViaLog: number;
  /** Redelivery attempts GitHub made, in all. */
  redeliveries: number;
  /** From the stop's beginning to the first /ready that answered 503 (ms). */
  notReadyAfterMs: number | null;
  /** From the database accepting connections again to the first /ready 200 (ms). */
  readyAfterMs: number | null;
  /** From the database back to the first new delivery answered 2xx (ms). */
  firstAckAfterMs: number | null;
  /** From the database back to every delivery sent being stored (ms). */
  recoveredAfterMs: number | null;
  /** From the database back to every issue replied to and nothing pending (ms). */
  convergedAfterMs: number;
  /** Exits of the service's process during the run (each one restarted). */
  exits: Exit[];
  wrongIssues: number[];
  repliesPosted: number;
  writesToGitHub: number;
}

/** Guids of `guids` that are rows of "Delivery"; null when the database does not answer. */
async function storedOf(url: string, guids: string[]): Promise<Set<string> | null> {
  try {
    return await withPg(url, async (c) => {
      const r = await c.query<{ id: string }>(
        `SELECT "deliveryId" AS id FROM "Delivery" WHERE "deliveryId" = ANY($1::text[])`,
        [guids],
      );
      return new Set(r.rows.map((row) => row.id));
    });
  } catch {
    return null;
  }
}

const BEFORE_MS = 5_000;
const AFTER_MS = 10_000;

export async function dbDownScenario(
  w: FaultWorld,
  cluster: PgCluster,
  o: DbDownOptions,
  progress: (line: string) => void,
): Promise<DbDownResult> {
  const downMsPlanned = o.downSeconds * 1000;
  const count = Math.max(o.issues, Math.round((o.rate * (BEFORE_MS + downMsPlanned + AFTER_MS)) / 1000));
  const { unique } = buildDeliveries(w, { issues: o.issues, count, duplicateShare: 0 }, prng(o.seed));
  const writesBefore = writesOf(w);
  const first = new Map<string, number>();
  const exits: Exit[] = [];
  let stopAt = Infinity;
  let backAt = Infinity;
  let notReadyAt: number | null = null;
  let readyAt: number | null = null;
  let firstAckAt: number | null = null;
  let watching = true;

  // /ready every 200 ms, and the process watched: an exit is counted and the service started again.
  const watch = (async () => {
    while (watching) {
      if (w.service.child.exit) {
        exits.push(w.service.child.exit);
        progress(`db-down: the service exited (${JSON.stringify(w.service.child.exit)}); starting it again`);
        await w.start().catch((e: unknown) => progress(`db-down: restart failed: ${String(e)}`));
        continue;
      }
      const status = await fetch(`${w.service.url}/ready`).then(
        (r) => r.status,
        () => 0,
      );
      const now = Date.now();
      if (now >= stopAt && notReadyAt === null && status !== 200) notReadyAt = now;
      if (now >= backAt && readyAt === null && status === 200) readyAt = now;
      await sleep(200);
    }
  })();

  const sends: Promise<void>[] = [];
  const send = (item: Item) =>
    w.fake.state.hookDeliveries.send(item.event, item.body, { guid: item.guid }).then((d) => {
      first.set(item.guid, d.status);
      if (d.status >= 200 && d.status < 300 && Date.now() >= backAt) firstAckAt ??= Date.now();
    });
  const t0 = Date.now();
  const outage = (async () => {
    await sleep(BEFORE_MS);
    stopAt = Date.now();
    await cluster.down(o.stopMode);
    const downAt = Date.now();
    progress(`db-down: PostgreSQL stopped (${o.stopMode}) after ${first.size} deliveries; down for ${o.downSeconds} s`);
    await sleep(downMsPlanned);
    const upAt = Date.now();
    await cluster.up();
    backAt = Date.now();
    progress(`db-down: PostgreSQL accepting connections again (start took ${backAt - upAt} ms)`);
    return upAt - downAt;
  })();
  // Awaited after the sends; a failure to stop or start the server must not go unhandled meanwhile.
  outage.catch(() => undefined);
  for (let i = 0; i < unique.length; i++) {
    const due = t0 + (i * 1000) / o.rate;
    if (due > Date.now()) await sleep(due - Date.now());
    sends.push(send(unique[i]!));
  }
  const downMs = await outage;
  await Promise.allSettled(sends);
  const refused = unique.filter((u) => first.get(u.guid) === 503).length;
  progress(`db-down: ${unique.length} sent, ${refused} answered 503; waiting for the delivery log to bring them back`);

  const guids = unique.map((u) => u.guid);
  const deadline = Date.now() + o.timeoutMs;
  let recoveredAt: number | null = null;
  let stored = new Set<string>();
  for (;;) {
    stored = (await storedOf(w.db.url, guids)) ?? stored;
    if (stored.size === guids.length) {
      recoveredAt = Date.now();
      break;
    }
    if (Date.now() > deadline) {
      progress(`db-down: not recovered in time (${stored.size}/${guids.length} stored)`);
      break;
    }
    await sleep(500);
  }
  const convergeBudget = Math.max(30_000, deadline - Date.now());
  await converge(w, { issues: o.issues, unique: unique.length, timeoutMs: convergeBudget, label: "db-down" }, progress);
  const convergedAt = Date.now();
  watching = false;
  await watch;
  stored = (await storedOf(w.db.url, guids)) ?? stored;

  const attempts = w.fake.state.hookDeliveries.items;
  const ok = (s: number) => s >= 200 && s < 300;
  const acked = new Set(attempts.filter((a) => ok(a.status)).map((a) => a.guid));
  const redelivered = new Set(attempts.filter((a) => a.redelivery && ok(a.status)).map((a) => a.guid));
  const answeredOther: Record<string, number> = {};
  for (const s of first.values()) if (!ok(s) && s !== 503) answeredOther[s] = (answeredOther[s] ?? 0) + 1;
  const { wrongIssues, replies } = checkIssues(w, o.issues);
  const since = (at: number | null, from: number) => (at === null ? null : at - from);
  return {
    stopMode: o.stopMode,
    rate: o.rate,
    downMs,
    sent: unique.length,
    answered2xx: [...first.values()].filter(ok).length,
    answered503: refused,
    answeredOther,
    ackedLost: guids.filter((g) => acked.has(g) && !stored.has(g)).length,
    stored: stored.size,
    recoveredViaLog: guids.filter((g) => !ok(first.get(g) ?? 0) && redelivered.has(g) && stored.has(g)).length,
    redeliveries: attempts.filter((a) => a.redelivery).length,
    notReadyAfterMs: since(notReadyAt, stopAt),
    readyAfterMs: since(readyAt, backAt),
    firstAckAfterMs: since(firstAckAt, backAt),
    recoveredAfterMs: since(recoveredAt, backAt),
    convergedAfterMs: convergedAt - backAt,
    exits,
    wrongIssues,
    repliesPosted: replies,
    writesToGitHub: writesOf(w) - writesBefore,
  };
}
