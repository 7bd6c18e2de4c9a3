/**
 * `orchestra workers list | add <name> | revoke <id> | rotate <id> | resume <id>`:
 * the operator's view of worker tokens and pauses, over the service's API. A
 * human table by default, `--json` for scripts. A new or rotated token is
 * printed once, here; Orchestra keeps only its hash.
 */
import type { Command } from "commander";
import type { WorkerListing } from "../workers/tokens.js";
import { maskUrl } from "../redact/redact.js";
import { EXIT, api, baseUrl, die, out, table as textTable, when } from "./io.js";

export interface WorkersIo {
  /** An admin API call; it reports the failure and exits on an error answer. */
  api(path: string, init?: RequestInit): Promise<unknown>;
  out: (text: string) => void;
  /** The service's address, for the `orchestra worker` line after a registration. */
  url: string;
}

export const WORKERS_USAGE = `  workers [list] [--json]      worker tokens: id, name, repositories, token hint,\
 last seen, live leases, paused until (and why), revoked
  workers add <name> [--repo owner/repo ...] [--json]
                               register a worker (for these repositories; without --repo, for every one);
                               its token is printed once, for orchestra worker
  workers revoke <id> [--json] revoke a worker: its token is refused from now on and its live leases are released
  workers rotate <id> [--json] a new token for a worker, printed once; the old token stops working
  workers resume <id> [--json] lift a worker's pause (too many runs released or leases lost): it may claim again`;

type Verb = "list" | "add" | "revoke" | "rotate" | "resume";
const VERBS: readonly string[] = ["list", "add", "revoke", "rotate", "resume"];

export interface WorkersArgs {
  verb: Verb;
  /** The worker id (revoke, rotate, resume) or the new worker's name (add). */
  id?: string;
  /** add: the repositories it may claim in; absent: every repository. */
  repos?: string[];
  json: boolean;
}

/** As the API checks it (api/worker-schemas.ts): refused here first, as a usage error with the usage line. */
const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** Parses `workers …` arguments: the verb, its worker id or name, --repo, --json; or what is wrong with them. */
export function workersArgs(args: string[]): WorkersArgs | { error: string } {
  const json = args.includes("--json");
  const repos: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--json") continue;
    if (a === "--repo" || a.startsWith("--repo=")) {
      const repo = a === "--repo" ? args[++i] : a.slice("--repo=".length);
      if (!repo || repo.startsWith("-")) return { error: `workers: --repo needs owner/repo\n${WORKERS_USAGE}` };
      repos.push(repo);
      continue;
    }
    rest.push(a);
  }
  const unknown = rest.find((a) => a.startsWith("-"));
  if (unknown) return { error: `workers: unknown option ${unknown}\n${WORKERS_USAGE}` };
  const [verb = "list", id, extra] = rest;
  if (!VERBS.includes(verb))
    return {
      error:
        `workers: unknown verb "${verb}"; use list, add <name>, revoke <id>, rotate <id> or resume <id>\n` +
        WORKERS_USAGE,
    };
  const v = verb as Verb;
  if (repos.length > 0 && v !== "add") return { error: `workers ${v} takes no --repo (only workers add does)` };
  if (v === "list")
    return rest.length > 1
      ? { error: `workers list takes no arguments (got ${rest.slice(1).join(" ")})` }
      : { verb: v, json };
  if (v === "add") {
    if (!id)
      return { error: `workers add needs a name for the worker, e.g. orchestra workers add laptop --repo acme/app` };
    if (extra !== undefined)
      return { error: `workers add takes one name (got ${rest.slice(1).join(" ")}); repositories go after --repo` };
    const bad = repos.find((r) => !REPO.test(r));
    if (bad) return { error: `workers add: --repo ${bad} is not owner/repo` };
    return { verb: v, id, json, ...(repos.length ? { repos } : {}) };
  }
  if (!id) return { error: `workers ${v} needs a worker id; list them with: orchestra workers list` };
  if (extra !== undefined) return { error: `workers ${v} takes one worker id (got ${rest.slice(1).join(" ")})` };
  return { verb: v, id, json };
}

/** `orchestra workers`, on the program: commander parses the options, workersArgs the rest. */
export function workersCommandOf(cli: Command): void {
  cli
    .command("workers")
    .usage("[list] | add <name> [--repo owner/repo ...] | revoke <id> | rotate <id> | resume <id> [--json]")
    .description(
      "worker tokens: list them (id, name, repositories, token hint, last seen, live leases, paused, revoked); " +
        "add one (register a worker: its token, printed once, is what orchestra worker needs); " +
        "revoke one (its token is refused, its leases released); rotate one (a new token, printed once); " +
        "resume one that was paused for releasing runs or losing leases too often",
    )
    .argument("[verb]", "list (default), add, revoke, rotate or resume")
    .argument("[id]", "the worker id, for revoke, rotate and resume; the new worker's name, for add")
    .argument("[extra...]", "nothing: more is refused")
    .option(
      "--repo <owner/repo>",
      "add: a repository the worker may claim in (repeat it for more; none: every repository)",
      (repo: string, all: string[] = []) => [...all, repo],
    )
    .option("--json", "the API's answer")
    .action(
      async (
        verb: string | undefined,
        id: string | undefined,
        extra: string[],
        o: { json?: boolean; repo?: string[] },
      ) => {
        const args = workersArgs(
          [verb, id, ...extra]
            .filter((a): a is string => a !== undefined)
            .concat(
              o.json ? ["--json"] : [],
              (o.repo ?? []).flatMap((r) => ["--repo", r]),
            ),
        );
        if ("error" in args) die(EXIT.usage, args.error);
        await workersCommand(args, { api, out, url: maskUrl(baseUrl()) });
      },
    );
}

export async function workersCommand(args: WorkersArgs, io: WorkersIo): Promise<void> {
  const { out } = io;
  const list = async () => ((await io.api("/api/v1/workers")) as { workers: WorkerListing[] }).workers;
  if (args.verb === "list") {
    const workers = await list();
    out(args.json ? `${JSON.stringify({ workers }, null, 2)}\n` : table(workers));
    return;
  }
  if (args.verb === "add") {
    const made = (await io.api("/api/v1/workers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: args.id, ...(args.repos ? { repos: args.repos } : {}) }),
    })) as { id: string; token: string; tokenHint: string };
    out(args.json ? `${JSON.stringify(made, null, 2)}\n` : registered(made, args, io.url));
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

/** A registration as told to the operator: the token on a line of its own, once, and how to use it. */
function registered(made: { id: string; token: string }, args: WorkersArgs, url: string): string {
  const where = args.repos ? args.repos.join(", ") : "every repository the App is installed on";
  return (
    `worker ${made.id} (${args.id}) registered; it may claim in ${where}\n` +
    `its token, shown only once (Orchestra keeps only its hash; if it is lost, ` +
    `orchestra workers rotate ${made.id} makes a new one):\n` +
    `${made.token}\n` +
    `give it to the worker in ORCHESTRA_WORKER_TOKEN, or in a file for --token-file:\n` +
    `  ORCHESTRA_WORKER_TOKEN=<the token above> orchestra worker --url ${url} --agent '<agent command>'\n`
  );
}

/** A fixed-width table of workers, one line each, the newest last. */
export function table(workers: WorkerListing[]): string {
  if (workers.length === 0)
    return "no workers registered; register one with: orchestra workers add <name> [--repo owner/repo ...]\n";
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
