// Deliveries as a bad day brings them: each issue labelled `agent:queued` by someone without write access
// (Orchestra takes the label off and replies once), buried in comments that ask nothing, a share sent twice
// under the same delivery id, all shuffled, and the service killed with SIGKILL now and then while deliveries
// are in flight and effects are pending. GitHub's log records what failed to arrive, and the service asks for
// it again by itself. In the end every issue has exactly one reply and no queue label, and every delivery
// is stored once.
import { randomUUID } from "node:crypto";
import { fakeWebhookPayload } from "../../test/support/webhooks.js";
import { sleep } from "../ingest/targets.js";
import { DRIVE_BY, REPO, type FaultWorld } from "./world.js";

export interface DeliveriesResult {
  deliveries: number;
  duplicates: number;
  kills: number;
  refusedWhileDown: number;
  stored: number;
  uniqueSent: number;
  /** Issues whose reply count is not exactly one, or that still carry the queue label. */
  wrongIssues: number[];
  repliesPosted: number;
  writesToGitHub: number;
  convergedAfterMs: number;
  restartMs: number[];
}

export interface Item {
  event: string;
  guid: string;
  body: string;
}

/** A PRNG of its own, so a seed gives the same shuffle and the same kill points. */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * The labelled issues (one delivery each), then comments that ask nothing, so that `count / (1 + duplicateShare)`
 * deliveries are distinct; then duplicates drawn from them up to `count`, all shuffled.
 */
export function buildDeliveries(
  w: FaultWorld,
  o: { issues: number; count: number; duplicateShare: number },
  random: () => number,
): { unique: Item[]; items: Item[] } {
  const { fake } = w;
  const unique: Item[] = [];
  for (let n = 1; n <= o.issues; n++) {
    fake.state.labelIssue(REPO, n, "agent:queued", DRIVE_BY);
    const labeled = fakeWebhookPayload(fake, "issues", "labeled", {
      repo: REPO,
      issue: n,
      label: "agent:queued",
      sender: DRIVE_BY,
    });
    unique.push({ event: "issues", guid: randomUUID(), body: JSON.stringify(labeled) });
  }
  const fillers = Math.max(0, Math.round(o.count / (1 + o.duplicateShare)) - unique.length);
  for (let k = 0; k < fillers; k++) {
    const n = 1 + Math.floor(random() * o.issues);
    const comment = fake.state.addComment(REPO, n, { body: `+1 (${k})`, user: DRIVE_BY });
    const payload = fakeWebhookPayload(fake, "issue_comment", "created", {
      repo: REPO,
      issue: n,
      comment: comment.id,
      sender: DRIVE_BY,
    });
    unique.push({ event: "issue_comment", guid: randomUUID(), body: JSON.stringify(payload) });
  }
  const items = [...unique];
  while (items.length < o.count) items.push(unique[Math.floor(random() * unique.length)]!);
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return { unique, items };
}

/** GitHub writes so far (token requests are not writes). */
export const writesOf = (w: FaultWorld): number =>
  w.fake.requests.filter((r) => r.method !== "GET" && !r.path.includes("access_tokens")).length;

const repliesOn = (w: FaultWorld, n: number) => w.fake.state.commentsOn(REPO, n).filter((c) => c.viaApp).length;

/**
 * Waits until `unique` deliveries are stored, none is being processed, no effect is pending and every issue has
 * a reply, or `timeoutMs` runs out; answers the deliveries stored.
 */
export async function converge(
  w: FaultWorld,
  o: { issues: number; unique: number; timeoutMs: number; label: string },
  progress: (line: string) => void,
): Promise<number> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    await w.fake.state.hookDeliveries.idle();
    const d = await w.api<{ counts: Record<string, number> }>("/api/v1/deliveries?limit=1");
    const e = await w.api<{ counts: Record<string, number> }>("/api/v1/effects?limit=1");
    const stored = Object.values(d.counts).reduce((a, b) => a + b, 0);
    const busy = (d.counts["pending"] ?? 0) + (d.counts["processing"] ?? 0) + (d.counts["retrying"] ?? 0);
    const effectsBusy = (e.counts["pending"] ?? 0) + (e.counts["running"] ?? 0);
    const allReplied = Array.from({ length: o.issues }, (_, k) => repliesOn(w, k + 1)).every((c) => c >= 1);
    if (stored >= o.unique && busy === 0 && effectsBusy === 0 && allReplied) return stored;
    if (Date.now() > deadline) {
      progress(`${o.label}: not converged in time (stored ${stored}/${o.unique}, busy ${busy}/${effectsBusy})`);
      return stored;
    }
    await sleep(500);
  }
}

/** Issues whose reply count is not exactly one or that still carry the queue label, and the replies in all. */
export function checkIssues(w: FaultWorld, issues: number): { wrongIssues: number[]; replies: number } {
  const wrongIssues: number[] = [];
  let replies = 0;
  for (let n = 1; n <= issues; n++) {
    const r = repliesOn(w, n);
    replies += r;
    if (r !== 1 || w.fake.state.labelsOf(REPO, n).includes("agent:queued")) wrongIssues.push(n);
  }
  return { wrongIssues, replies };
}

export async function deliveriesScenario(
  w: FaultWorld,
  o: { issues: number; deliveries: number; duplicateShare: number; kills: number; seed: number; timeoutMs: number },
  progress: (line: string) => void,
): Promise<DeliveriesResult> {
  const random = prng(o.seed);
  const { unique, items } = buildDeliveries(w, { ...o, count: o.deliveries }, random);
  const killAt = new Set(
    Array.from({ length: o.kills }, (_, k) => Math.floor(((k + 1) * items.length) / (o.kills + 1))),
  );
  const writesBefore = writesOf(w);
  const started = Date.now();
  const restartMs: number[] = [];
  let refused = 0;
  const CONCURRENCY = 8;
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < items.length; i++) {
    if (killAt.has(i)) {
      // Killed with deliveries in flight: those fail (GitHub's log says so) and effects wait in the outbox.
      await w.service.kill();
      await Promise.allSettled([...inFlight]);
      restartMs.push(await w.start());
      progress(
        `deliveries: SIGKILL ${restartMs.length}/${o.kills} at ${i}/${items.length}; ready again in ${restartMs.at(-1)} ms`,
      );
    }
    const item = items[i]!;
    const p = w.fake.state.hookDeliveries.send(item.event, item.body, { guid: item.guid }).then((d) => {
      if (d.status < 200 || d.status >= 300) refused += 1;
    });
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= CONCURRENCY) await Promise.race(inFlight);
  }
  await Promise.allSettled([...inFlight]);
  progress(`deliveries: ${items.length} sent (${refused} refused while the service was down); waiting to converge`);
  const stored = await converge(
    w,
    { issues: o.issues, unique: unique.length, timeoutMs: o.timeoutMs, label: "deliveries" },
    progress,
  );
  const { wrongIssues, replies } = checkIssues(w, o.issues);
  return {
    deliveries: items.length,
    duplicates: items.length - unique.length,
    kills: o.kills,
    refusedWhileDown: refused,
    stored,
    uniqueSent: unique.length,
    wrongIssues,
    repliesPosted: replies,
    writesToGitHub: writesOf(w) - writesBefore,
    convergedAfterMs: Date.now() - started,
    restartMs,
  };
}
