/**
 * `orchestra prune [--dry-run] [--json]`: deletes now what the service's
 * retention would delete on its schedule (the ORCHESTRA_RETENTION_* settings
 * of the environment), in batches until nothing older is left. It changes
 * the database, so like `migrate` it opens it directly (DATABASE_URL) rather
 * than asking a running service.
 */
import { ConfigError, parseEnv } from "../config/env.js";
import { scrub, secretsOf } from "../redact/redact.js";
import { PRUNED_KINDS, prune, totalOf, type PrunedKind, type PruneResult } from "../retention/retention.js";
import type { RetentionPolicy } from "../config/defaults.js";
import { openExisting, reason } from "./database.js";

export interface PruneFlags {
  dryRun: boolean;
  json: boolean;
}

export interface PruneIo {
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** For progress lines (default Date.now). */
  now?: () => number;
}

const LABEL: Record<PrunedKind, string> = {
  deliveries: "deliveries (done, ignored)",
  effects: "effects (done, dropped, dry-run)",
  idempotency: "idempotency keys",
  sweepReports: "sweep reports",
  audit: "audit entries",
};

/** Runs the command; answers the exit code (0 done, 1 database trouble, 2 bad settings). */
export async function pruneCommand(flags: PruneFlags, io: PruneIo): Promise<number> {
  const fail = (code: number, message: string) => {
    io.err(`orchestra: ${scrub(message, secretsOf(io.env))}\n`);
    return code;
  };
  const settings = Object.fromEntries(
    Object.entries(io.env).filter(([k]) => k === "DATABASE_URL" || k.startsWith("ORCHESTRA_RETENTION_")),
  );
  let url: string | undefined;
  let policy: RetentionPolicy;
  try {
    const env = parseEnv(settings);
    url = env.databaseUrl;
    policy = env.retention;
  } catch (err) {
    if (err instanceof ConfigError) return fail(2, err.lines.join("; "));
    throw err;
  }
  const opened = await openExisting(url);
  if (!opened.ok) {
    if (opened.problem === "missing") {
      return fail(
        1,
        `no database at ${opened.path}; set DATABASE_URL to the service's database (file:/path/to/orchestra.db ` +
          `or postgresql://user:password@host:5432/db), or run from the service's working directory`,
      );
    }
    const where = opened.problem === "unreachable" ? opened.where : (opened.url ?? "the default ./data/orchestra.db");
    return fail(
      1,
      `database unreachable at ${where} (${opened.why}); check DATABASE_URL ` +
        `and that the database server is running, then run orchestra prune again`,
    );
  }
  const { database } = opened;
  try {
    const now = io.now ?? Date.now;
    let lastShown = now();
    let result: PruneResult;
    try {
      result = await prune(database, policy, new Date(), {
        dryRun: flags.dryRun,
        onProgress: (kind, deleted) => {
          // A long run says how far it got about once a second, on stderr (stdout stays the answer).
          if (now() - lastShown < 1000) return;
          lastShown = now();
          io.err(`prune: ${LABEL[kind]}: ${deleted} deleted so far…\n`);
        },
      });
    } catch (err) {
      const why = reason(err);
      if (/no such table|does not exist|TableDoesNotExist/i.test(why))
        return fail(
          1,
          `the database at ${database.where} has no Orchestra tables (${why}); run orchestra migrate first`,
        );
      return fail(1, `prune stopped (${why}); what was deleted before stays deleted; run orchestra prune again`);
    }
    const total = totalOf(result.counts);
    if (flags.json) {
      io.out(
        `${JSON.stringify(
          {
            dryRun: result.dryRun,
            counts: result.counts,
            total,
            cutoffs: Object.fromEntries(PRUNED_KINDS.map((k) => [k, result.cutoffs[k].toISOString()])),
            retention: policy,
            database: { provider: database.provider, where: database.where },
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    io.out(
      result.dryRun
        ? `dry run: nothing deleted; would delete ${total} row(s) (${database.provider}, ${database.where})\n`
        : `deleted ${total} row(s) (${database.provider}, ${database.where})\n`,
    );
    for (const k of PRUNED_KINDS)
      io.out(
        `  ${LABEL[k].padEnd(34)} ${String(result.counts[k]).padStart(8)}  ` +
          `older than ${result.cutoffs[k].toISOString()}\n`,
      );
    io.out(
      "kept: parked deliveries and effects, unfinished work, and task history (tasks, runs, decisions, receipts)\n",
    );
    return 0;
  } finally {
    await database.close();
  }
}
