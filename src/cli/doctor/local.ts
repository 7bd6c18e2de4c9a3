/**
 * `orchestra doctor`'s local checks: the environment, read as the service
 * reads it at start-up (parseEnv, ingestLimits), and the database it names
 * (reachable, every committed migration applied). Nothing secret is shown:
 * the settings' own error lines never echo a secret, and URLs are masked.
 */
import { ConfigError, parseEnv, type Credentials, type Env } from "../../config/env.js";
import { ingestLimits } from "../../ingest/limits.js";
import { maskUrl } from "../../redact/redact.js";
import { migrationNames, pendingOf } from "../../store/migrate.js";
import { openExisting, reason } from "../database.js";
import type { Check } from "./check.js";

const AGAIN = "then run orchestra doctor again";
const WHERE_SETTINGS =
  "in the service's environment (or the .env file of its working directory, " +
  "which the service and this command both read)";

/** The settings a registered App needs and the service's setup page would otherwise be started for. */
function unsetCredentials(raw: NodeJS.ProcessEnv): string[] {
  const set = (name: string) => (raw[name] ?? "") !== "";
  return [
    set("APP_ID") ? null : "APP_ID",
    set("PRIVATE_KEY") || set("PRIVATE_KEY_PATH") ? null : "PRIVATE_KEY (or PRIVATE_KEY_PATH)",
    set("WEBHOOK_SECRET") ? null : "WEBHOOK_SECRET",
    set("ORCHESTRA_ADMIN_TOKEN") ? null : "ORCHESTRA_ADMIN_TOKEN",
  ].filter((n): n is string => n !== null);
}

export function environmentCheck(raw: NodeJS.ProcessEnv): {
  check: Check;
  env: (Env & { credentials: Credentials }) | null;
} {
  const name = "environment";
  let env: Env;
  try {
    env = parseEnv(raw);
    ingestLimits(raw);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const n = err.lines.length;
    return {
      check: {
        name,
        status: "fail",
        detail: `${n === 1 ? "1 setting is" : `${n} settings are`} missing or malformed:\n${err.lines.join("\n")}`,
        fix: `set ${n === 1 ? "it" : "them"} as each line says, ${WHERE_SETTINGS}; ${AGAIN}`,
      },
      env: null,
    };
  }
  if (!env.credentials) {
    const unset = unsetCredentials(raw);
    return {
      check: {
        name,
        status: "fail",
        detail:
          `not set: ${unset.join(", ")}; without them the service ` +
          `starts GitHub's App registration page instead of Orchestra`,
        fix:
          `set them to the registered App's id, private key and webhook secret, ` +
          `and an admin token (openssl rand -hex 32), ${WHERE_SETTINGS}; ${AGAIN}`,
      },
      env: null,
    };
  }
  const key = (raw["PRIVATE_KEY"] ?? "") !== "" ? "PRIVATE_KEY" : `PRIVATE_KEY_PATH ${raw["PRIVATE_KEY_PATH"]}`;
  const detail = [
    `APP_ID ${env.credentials.appId}`,
    `private key from ${key}`,
    "WEBHOOK_SECRET and ORCHESTRA_ADMIN_TOKEN set",
    `GitHub API ${env.baseUrl ?? "https://api.github.com"}`,
    `database ${env.databaseUrl ? maskUrl(env.databaseUrl) : "./data/orchestra.db (DATABASE_URL unset)"}`,
  ].join(", ");
  if (env.dryRun)
    return {
      check: {
        name,
        status: "warn",
        detail:
          `${detail}; ORCHESTRA_DRY_RUN is on: every GitHub write ` +
          `is recorded as "would have done" and none is performed`,
        fix: "unset ORCHESTRA_DRY_RUN when Orchestra should act on GitHub",
      },
      env: { ...env, credentials: env.credentials },
    };
  return { check: { name, status: "ok", detail }, env: { ...env, credentials: env.credentials } };
}

/**
 * The database DATABASE_URL names (read on its own, so a bad setting
 * elsewhere does not hide it): reachable, and no committed migration pending.
 */
export async function databaseCheck(raw: NodeJS.ProcessEnv): Promise<Check> {
  const name = "database";
  let url: string | undefined;
  try {
    url = parseEnv({ DATABASE_URL: raw["DATABASE_URL"] }).databaseUrl;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return {
      name,
      status: "fail",
      detail: err.lines.join("; "),
      fix: `correct DATABASE_URL ${WHERE_SETTINGS}; ${AGAIN}`,
    };
  }
  const opened = await openExisting(url);
  if (!opened.ok) {
    if (opened.problem === "missing") {
      return {
        name,
        status: "fail",
        detail: `no database at ${opened.path}`,
        fix:
          `set DATABASE_URL to the service's database (file:/path/to/orchestra.db or ` +
          `postgresql://user:password@host:5432/db), or run orchestra doctor from the service's working ` +
          `directory; for a new installation, orchestra migrate creates it; ${AGAIN}`,
      };
    }
    if (opened.problem === "unopenable")
      return {
        name,
        status: "fail",
        detail: `cannot open ${opened.url ?? "./data/orchestra.db"} (${opened.why})`,
        fix: `check DATABASE_URL and that the database server is running; ${AGAIN}`,
      };
    return {
      name,
      status: "fail",
      detail: `${opened.where} does not answer (${opened.why})`,
      fix:
        `check DATABASE_URL (host, port, user, password, database name) ` +
        `and that the database server is running and reachable from here; ${AGAIN}`,
    };
  }
  const { database } = opened;
  try {
    const committed = migrationNames(database.provider);
    let pending: string[];
    try {
      pending = await pendingOf(database, committed);
    } catch (err) {
      return {
        name,
        status: "fail",
        detail: `${database.where} answers, but its migrations cannot be read (${reason(err)})`,
        fix: `check that DATABASE_URL's user may read the _prisma_migrations table; ${AGAIN}`,
      };
    }
    if (pending.length > 0) {
      return {
        name,
        status: "fail",
        detail:
          `${database.provider} at ${database.where} answers, but ${pending.length} ` +
          `of ${committed.length} migrations are not applied: ${pending.join(", ")}`,
        fix:
          `run orchestra migrate with the same DATABASE_URL (the service ` +
          `also applies them when it starts); until then /ready answers 503`,
      };
    }
    return {
      name,
      status: "ok",
      detail: `${database.provider} at ${database.where} answers; all ${committed.length} migrations applied`,
    };
  } finally {
    await database.close();
  }
}
