/**
 * The operator CLI. Commands that change the database itself (migrate) open
 * it directly; the others talk to a running service over its API, so they
 * work the same against one replica or many.
 */
import { existsSync } from "node:fs";
import { ConfigError, parseEnv } from "../config/env.js";
import { openDatabase } from "../store/db.js";
import { maskUrl, scrub, secretsOf } from "../config/redact.js";
import { migrate } from "../store/migrate.js";
import { classifyArgs, classifyCommand, readAll } from "./classify.js";
import { pruneArgs, pruneCommand } from "./prune.js";
import { deliveriesText, type DeliveriesAnswer } from "./deliveries.js";
import { WORKERS_USAGE, workersArgs, workersCommand } from "./workers.js";

const USAGE = `usage: orchestra <command>

commands:
  migrate                      apply pending database migrations (DATABASE_URL; default ./data/orchestra.db)
  deliveries [--state STATE]   received webhook deliveries: how many in each state, and the latest ones
                               (pending, retrying after a failure, processing, done, ignored, parked)
  replay <delivery-id>         put a parked delivery back in the queue
  effects [--state STATE] [--task ID] [--json]
                               GitHub writes Orchestra recorded: pending, running, done, dropped,
                               dry-run (would have done) or parked (gave up; see its errors)
  effects replay <effect-id>   put a parked effect back in the queue once its cause is fixed
  ignored [--json]             counts of input Orchestra ignored (untrusted labels, commands, comments, …)
  prune [--dry-run] [--json]   delete old rows now, as retention would (ORCHESTRA_RETENTION_*, DATABASE_URL);
                               --dry-run: count them, delete nothing
${WORKERS_USAGE}
  classify [--batch]           what Orchestra would do with a run: reads the facts document (JSON) on stdin
                               and prints {class, recovery, evidence}; --batch: an array in, an array out

API commands read ORCHESTRA_URL (default http://localhost:$PORT or :3000) and ORCHESTRA_ADMIN_TOKEN.`;

/** Every failure goes out through here: URLs' passwords masked, secret settings never echoed. */
function die(code: number, message: string): never {
  process.stderr.write(`orchestra: ${scrub(message, secretsOf(process.env))}\n`);
  process.exit(code);
}

async function api(path: string, init: RequestInit = {}): Promise<unknown> {
  const base = process.env["ORCHESTRA_URL"] ?? `http://localhost:${process.env["PORT"] ?? "3000"}`;
  const token = process.env["ORCHESTRA_ADMIN_TOKEN"];
  if (!token) die(2, "ORCHESTRA_ADMIN_TOKEN is not set; export the service's admin token first");
  let res: Response;
  try {
    res = await fetch(base + path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  } catch (err) {
    die(1, `cannot reach the service at ${maskUrl(base)} (${(err as Error).cause ?? err}); is it running? set ORCHESTRA_URL if it listens elsewhere`);
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) die(1, `${init.method ?? "GET"} ${path} answered ${res.status}: ${(body as { error?: string } | null)?.error ?? res.statusText}`);
  return body;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (existsSync(".env")) process.loadEnvFile(".env");
  switch (command) {
    case "migrate": {
      let url: string | undefined;
      try {
        url = parseEnv({ DATABASE_URL: process.env["DATABASE_URL"] }).databaseUrl;
      } catch (err) {
        if (err instanceof ConfigError) die(2, err.lines.join("; "));
        throw err;
      }
      const where = url ? maskUrl(url) : "./data/orchestra.db";
      const failed = (what: string) => (err: unknown): never =>
        die(1, `${what} ${where} (${(err instanceof Error ? err.message : String(err)).split("\n").filter(Boolean).pop()}); check DATABASE_URL and that the database server is running`);
      const database = await openDatabase(url).catch(failed("database unavailable at"));
      try {
        // The PostgreSQL pool connects on first use: a server that is not there shows up here.
        const report = await migrate(database, (line) => process.stdout.write(`${line}\n`)).catch(failed("migrations failed on"));
        process.stdout.write(`migrations: ${report.applied.length} applied, ${report.alreadyApplied} already applied (${database.provider}, ${database.where})\n`);
      } finally {
        await database.close();
      }
      return;
    }
    case "deliveries": {
      const i = rest.indexOf("--state");
      const state = i >= 0 ? rest[i + 1] : undefined;
      const body = (await api(`/api/v1/deliveries${state ? `?state=${encodeURIComponent(state)}` : ""}`)) as DeliveriesAnswer;
      process.stdout.write(deliveriesText(body));
      return;
    }
    case "replay": {
      const id = rest[0];
      if (!id) die(2, "replay needs a delivery id; list parked ones with: orchestra deliveries --state parked");
      await api(`/api/v1/deliveries/${encodeURIComponent(id)}/replay`, { method: "POST" });
      process.stdout.write(`${id} queued again\n`);
      return;
    }
    case "effects": {
      if (rest[0] === "replay") {
        const id = rest[1];
        if (!id) die(2, "effects replay needs an effect id; list parked ones with: orchestra effects --state parked");
        await api(`/api/v1/effects/${encodeURIComponent(id)}/replay`, { method: "POST" });
        process.stdout.write(`${id} queued again\n`);
        return;
      }
      const flag = (name: string) => {
        const i = rest.indexOf(name);
        return i >= 0 ? rest[i + 1] : undefined;
      };
      const query = new URLSearchParams();
      const state = flag("--state");
      const task = flag("--task");
      if (state) query.set("state", state);
      if (task) query.set("task", task);
      const body = (await api(`/api/v1/effects${query.size ? `?${query}` : ""}`)) as {
        counts: Record<string, number>;
        effects: Array<{ id: string; task: string | null; kind: string; state: string; attempts: number; note: string | null; errors: Array<{ message: string }> }>;
      };
      if (rest.includes("--json")) {
        process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
        return;
      }
      process.stdout.write(`counts: ${Object.entries(body.counts).map(([k, v]) => `${k}=${v}`).join(" ") || "none"}\n`);
      for (const e of body.effects) {
        const last = e.errors[e.errors.length - 1]?.message;
        const why = e.state === "parked" || e.state === "pending" ? (last ? `  last error: ${last}` : "") : e.note ? `  ${e.note}` : "";
        process.stdout.write(`${e.id}  ${e.kind}  ${e.state}  attempts=${e.attempts}  task=${e.task ?? "-"}${why}\n`);
      }
      return;
    }
    case "ignored": {
      const body = (await api("/api/v1/ignored")) as { counters: Array<{ name: string; value: number; updatedAt: string | null; what: string }> };
      if (rest.includes("--json")) {
        process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
        return;
      }
      const width = Math.max(...body.counters.map((c) => c.name.length));
      for (const c of body.counters) process.stdout.write(`${c.name.padEnd(width)}  ${String(c.value).padStart(6)}  ${c.updatedAt ? `last ${c.updatedAt}` : "never"}  ${c.what}\n`);
      return;
    }
    case "prune": {
      const args = pruneArgs(rest);
      if ("error" in args) die(2, args.error);
      process.exitCode = await pruneCommand(args.flags, { env: process.env, out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
      return;
    }
    case "workers": {
      const args = workersArgs(rest);
      if ("error" in args) die(2, args.error);
      await workersCommand(args, { api, out: (t) => process.stdout.write(t) });
      return;
    }
    case "classify": {
      const args = classifyArgs(rest);
      if ("error" in args) die(2, args.error);
      // Waiting on a terminal would look like a hang; say what it expects instead.
      if (process.stdin.isTTY) die(2, "classify reads a facts document (JSON) on stdin, e.g. orchestra classify < facts.json");
      const answer = classifyCommand(await readAll(process.stdin), args.flags);
      process.stdout.write(answer.stdout);
      process.stderr.write(answer.stderr);
      // exitCode, not exit(): exit() can cut off a large answer still draining into a pipe.
      process.exitCode = answer.code;
      return;
    }
    case undefined:
    case "help":
    case "--help":
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      die(2, `unknown command "${command}"\n${USAGE}`);
  }
}

await main(process.argv.slice(2)).catch((err: unknown) => die(1, `failed: ${err instanceof Error ? err.message : String(err)}`));
