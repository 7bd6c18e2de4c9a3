/**
 * `orchestra workers list | revoke <id> | rotate <id> | resume <id>`: the
 * operator's view of worker tokens and pauses, over the service's API. A human table by default,
 * `--json` for scripts. A rotated token is printed once, here; Orchestra
 * keeps only its hash.
 */
import type { WorkerListing } from "../workers/tokens.js";
import { table as textTable, when } from "./io.js";

export interface WorkersIo {
  /** An admin API call; it reports the failure and exits on an error answer. */
  api(path: string, init?: RequestInit): Promise<unknown>;
  out: (text: string) => void;
}

export const WORKERS_USAGE = `  workers [list] [--json]      worker tokens: id, name, repositories, token hint,\
 last seen, live leases, paused until (and why), revoked
  workers revoke <id> [--json] revoke a worker: its token is refused from now on and its live leases are released
  workers rotate <id> [--json] a new token for a worker, printed once; the old token stops working
  workers resume <id> [--json] lift a worker's pause (too many runs released or leases lost): it may claim again`;

type Verb = "list" | "revoke" | "rotate" | "resume";

/** Parses `workers …` arguments: the verb, its worker id, --json; or what is wrong with them. */
export function workersArgs(args: string[]): { verb: Verb; id?: string; json: boolean } | { error: string } {
  const json = args.includes("--json");
  const rest = args.filter((a) => a !== "--json");
  const unknown = rest.find((a) => a.startsWith("-"));
  if (unknown) return { error: `workers: unknown option ${unknown}\n${WORKERS_USAGE}` };
  const [verb = "list", id, extra] = rest;
  if (verb !== "list" && verb !== "revoke" && verb !== "rotate" && verb !== "resume")
    return {
      error: `workers: unknown verb "${verb}"; use list, revoke <id>, rotate <id> or resume <id>\n${WORKERS_USAGE}`,
    };
  if (verb === "list")
    return rest.length > 1
      ? { error: `workers list takes no arguments (got ${rest.slice(1).join(" ")})` }
      : { verb, json };
  if (!id) return { error: `workers ${verb} needs a worker id; list them with: orchestra workers list` };
  if (extra !== undefined) return { error: `workers ${verb} takes one worker id (got ${rest.slice(1).join(" ")})` };
  return { verb, id, json };
}

export async function workersCommand(args: { verb: Verb; id?: string; json: boolean }, io: WorkersIo): Promise<void> {
  const { out } = io;
  const list = async () => ((await io.api("/api/v1/workers")) as { workers: WorkerListing[] }).workers;
  if (args.verb === "list") {
    const workers = await list();
    out(args.json ? `${JSON.stringify({ workers }, null, 2)}\n` : table(workers));
    return;
  }
  const id = args.id!;
  const path = `/api/v1/workers/${encodeURIComponent(id)}`;
  if (args.verb === "revoke") {
    // Read first, to say which worker it was and how many leases went back.
    const before = (await list()).find((w) => w.id === id);
    await io.api(path, { method: "DELETE" });
    const after = (await list()).find((w) => w.id === id);
    if (args.json) {
      out(`${JSON.stringify({ worker: after ?? null, leasesReleased: before?.liveLeases ?? 0 }, null, 2)}\n`);
      return;
    }
    const name = after?.name ?? before?.name ?? "?";
    const leases = before?.liveLeases ?? 0;
    out(
      `worker ${id} (${name}) revoked: its token is refused from now on; ` +
        `${leases} live lease${leases === 1 ? "" : "s"} released (their runs are classified by the next sweep)\n`,
    );
    return;
  }
  if (args.verb === "resume") {
    const r = (await io.api(`${path}/resume`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })) as { id: string; name: string; wasPaused: { until: string; reason: string } | null };
    if (args.json) {
      out(`${JSON.stringify(r, null, 2)}\n`);
      return;
    }
    out(
      r.wasPaused
        ? `worker ${id} (${r.name}) resumed: it may claim again (it was paused until ${r.wasPaused.until}: ` +
            `${r.wasPaused.reason}); earlier releases no longer count\n`
        : `worker ${id} (${r.name}) was not paused; earlier releases no longer count\n`,
    );
    return;
  }
  const rotated = (await io.api(`${path}/rotate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  })) as { id: string; token: string; tokenHint: string; rotatedAt: string };
  if (args.json) {
    out(`${JSON.stringify(rotated, null, 2)}\n`);
    return;
  }
  out(
    `new token for worker ${id} (shown once; Orchestra keeps only its hash; ` +
      `the old token no longer works):\n${rotated.token}\n`,
  );
}

/** A fixed-width table of workers, one line each, the newest last. */
export function table(workers: WorkerListing[]): string {
  if (workers.length === 0) return "no workers registered; register one with POST /api/v1/workers (admin token)\n";
  return (
    textTable(
      ["ID", "NAME", "REPOS", "TOKEN", "LAST SEEN", "LEASES", "PAUSED UNTIL", "REVOKED"],
      workers.map((w) => [
        w.id,
        w.name,
        w.repos === null ? "all" : w.repos.join(","),
        w.tokenHint ? `…${w.tokenHint}` : "-",
        when(w.lastSeenAt),
        String(w.liveLeases),
        when(w.paused?.until ?? null),
        when(w.revokedAt),
      ]),
    ) + pauses(workers)
  );
}

/** Under the table: why each paused worker is paused, and how to lift it. */
function pauses(workers: WorkerListing[]): string {
  const paused = workers.filter((w) => w.paused);
  return paused
    .map((w) => `paused ${w.id} (${w.name}): ${w.paused!.reason}; resume it with: orchestra workers resume ${w.id}\n`)
    .join("");
}
