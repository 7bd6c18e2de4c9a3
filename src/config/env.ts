/**
 * Start-up configuration from the environment: Probot's names plus
 * DATABASE_URL and ORCHESTRA_ADMIN_TOKEN. Parsed once, at the edge; a bad
 * value stops start-up with one line per setting that names it and says what
 * a valid value looks like.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { maskUrl, SECRET_SETTING } from "../redact/redact.js";
import { databaseUrlProblem } from "./database-url.js";
import { normalizeKey, pem, whole } from "./env-fields.js";
import {
  DEFAULT_DELIVERIES_SWEEP_SECONDS,
  DEFAULT_FLEET_DEBOUNCE_MS,
  DEFAULT_REDELIVERIES_PER_SWEEP,
  DEFAULT_RETENTION,
  GITHUB_REDELIVERY_DAYS,
  MIN_DELIVERIES_DAYS,
  type RetentionPolicy,
} from "./defaults.js";

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

const schema = z.object({
  APP_ID: z
    .string()
    .regex(/^[1-9][0-9]*$/, "must be the App's numeric id from its settings page, e.g. 123456")
    .optional(),
  PRIVATE_KEY: pem.optional(),
  PRIVATE_KEY_PATH: z.string().min(1).optional(),
  WEBHOOK_SECRET: z.string().min(1, "must be the webhook secret set on the App (a non-empty string)").optional(),
  PORT: z
    .string()
    .regex(/^[0-9]+$/, "must be a TCP port number, e.g. 3000")
    .transform(Number)
    .refine((p) => p >= 1 && p <= 65535, "must be a TCP port number between 1 and 65535")
    .default(3000),
  HOST: z.string().min(1).default("localhost"),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(", ")}` }).default("info"),
  GHE_HOST: z
    .string()
    .regex(
      /^[A-Za-z0-9.-]+(:[0-9]+)?$/,
      "must be a host name with an optional port, without a scheme, e.g. github.example.com or 127.0.0.1:3001",
    )
    .optional(),
  WEBHOOK_PROXY_URL: z
    .string()
    .refine(
      (u) => URL.canParse(u) && ["http:", "https:"].includes(new URL(u).protocol),
      "must be the address of a webhook proxy channel, e.g. https://smee.io/AbC123",
    )
    .optional(),
  GHE_PROTOCOL: z.enum(["http", "https"], { message: "must be http or https" }).default("https"),
  DATABASE_URL: z
    .string()
    .superRefine((u, ctx) => {
      const problem = databaseUrlProblem(u);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  ORCHESTRA_ADMIN_TOKEN: z
    .string()
    .min(32, "must be at least 32 characters; generate one with: openssl rand -hex 32")
    .optional(),
  ORCHESTRA_METRICS_TOKEN: z
    .string()
    .min(
      32,
      "must be at least 32 characters; generate one with: " +
        "openssl rand -hex 32, or leave it unset to serve /metrics without a token",
    )
    .optional(),
  NODE_ENV: z.string().optional(),
  ORCHESTRA_DRY_RUN: z.enum(["true", "false", "1", "0"], { message: "must be true or false" }).optional(),
  ORCHESTRA_NPM_REGISTRY: z
    .string()
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), {
      message: "must be an http(s) URL, e.g. https://registry.npmjs.org",
    })
    .default("https://registry.npmjs.org"),
  ORCHESTRA_RETENTION_DELIVERIES_DAYS: whole(
    "days",
    MIN_DELIVERIES_DAYS,
    36_500,
    DEFAULT_RETENTION.deliveriesDays,
    `: GitHub redelivers a delivery with the same id for ${GITHUB_REDELIVERY_DAYS} days, ` +
      `and the inbox recognises the redelivery as a duplicate only while its row is kept`,
  ),
  ORCHESTRA_RETENTION_EFFECTS_DAYS: whole("days", 1, 36_500, DEFAULT_RETENTION.effectsDays),
  ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS: whole("hours", 1, 876_000, DEFAULT_RETENTION.idempotencyHours),
  ORCHESTRA_RETENTION_SWEEP_REPORTS_DAYS: whole("days", 1, 36_500, DEFAULT_RETENTION.sweepReportsDays),
  ORCHESTRA_RETENTION_AUDIT_DAYS: whole("days", 1, 36_500, DEFAULT_RETENTION.auditDays),
  ORCHESTRA_RETRY_WINDOW_HOURS: whole(
    "hours",
    1,
    168,
    6,
    ": a shorter window parks deliveries and GitHub writes during an ordinary GitHub outage",
  ),
  ORCHESTRA_FLEET_DEBOUNCE_SECONDS: whole(
    "seconds",
    5,
    3_600,
    DEFAULT_FLEET_DEBOUNCE_MS / 1000,
    ": each window is at most one edit of a repository's fleet issue",
  ),
  ORCHESTRA_DELIVERIES_SWEEP_SECONDS: whole(
    "seconds",
    10,
    3_600,
    DEFAULT_DELIVERIES_SWEEP_SECONDS,
    ": each sweep reads GitHub's delivery log as the App",
  ),
  ORCHESTRA_REDELIVERIES_PER_SWEEP: whole("redeliveries", 1, 1_000, DEFAULT_REDELIVERIES_PER_SWEEP),
  ORCHESTRA_RETENTION_INTERVAL_MINUTES: whole(
    "minutes",
    0,
    525_600,
    DEFAULT_RETENTION.intervalMinutes,
    " (0 turns scheduled pruning off)",
  ),
});

export interface Credentials {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  adminToken: string;
}

export interface Env {
  port: number;
  host: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** REST base URL; undefined means api.github.com. */
  baseUrl: string | undefined;
  databaseUrl: string | undefined;
  /** A webhook proxy channel (smee.io) whose deliveries are forwarded to the webhook path (WEBHOOK_PROXY_URL). */
  webhookProxyUrl?: string;
  production: boolean;
  /** Record every GitHub write as "would have done" instead of performing it, in every repository. */
  dryRun: boolean;
  /** Where `npm-version:` question conditions are checked (ORCHESTRA_NPM_REGISTRY). */
  npmRegistry: string;
  /** How long old rows are kept, and how often the service prunes (ORCHESTRA_RETENTION_*). */
  retention: RetentionPolicy;
  /**
   * How long a delivery or GitHub write failing on a GitHub outage (5xx, no answer,
   * rate limit) is retried before it is parked (ORCHESTRA_RETRY_WINDOW_HOURS).
   */
  retryWindowHours: number;
  /**
   * The fleet issue's debounce window: at most one edit of a repository's
   * fleet issue per window (ORCHESTRA_FLEET_DEBOUNCE_SECONDS).
   */
  fleetDebounceSeconds: number;
  /**
   * The pace of recovering deliveries GitHub could not deliver: a sweep of its delivery log every so many seconds
   * (ORCHESTRA_DELIVERIES_SWEEP_SECONDS), asking for at most so many redeliveries (ORCHESTRA_REDELIVERIES_PER_SWEEP).
   */
  deliveriesSweepSeconds: number;
  redeliveriesPerSweep: number;
  /** Bearer token `/metrics` requires (ORCHESTRA_METRICS_TOKEN); undefined serves it to anyone who reaches the port. */
  metricsToken: string | undefined;
  /** Present when the App is registered; absent means Probot's setup page runs. */
  credentials: Credentials | undefined;
}

export class ConfigError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join("\n"));
    this.name = "ConfigError";
  }
}

/** A rejected value as it may be echoed: a URL's password masked first, then cut to 60 characters. */
const shown = (v: string | undefined): string => {
  if (v === undefined) return "unset";
  const masked = maskUrl(v);
  return `"${masked.length > 60 ? `${masked.slice(0, 57)}...` : masked}"`;
};

export function parseEnv(
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): Env {
  const raw = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = schema.safeParse(raw);
  const lines: string[] = [];
  if (!result.success) {
    for (const issue of result.error.issues) {
      const name = String(issue.path[0] ?? "environment");
      const secret = /KEY|SECRET|TOKEN/.test(name) || SECRET_SETTING.test(name);
      lines.push(`${name} ${issue.message}${secret ? "" : ` (got ${shown(raw[name])})`}`);
    }
    throw new ConfigError(lines);
  }
  const e = result.data;
  let privateKey = e.PRIVATE_KEY;
  if (!privateKey && e.PRIVATE_KEY_PATH) {
    try {
      privateKey = normalizeKey(readFile(e.PRIVATE_KEY_PATH));
    } catch (err) {
      throw new ConfigError([
        `PRIVATE_KEY_PATH cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): ` +
          `must name a readable PEM file, got "${e.PRIVATE_KEY_PATH}"`,
      ]);
    }
    const check = pem.safeParse(privateKey);
    if (!check.success)
      throw new ConfigError([
        `PRIVATE_KEY_PATH ${check.error.issues[0]?.message ?? "is not a PEM key"} (file "${e.PRIVATE_KEY_PATH}")`,
      ]);
  }
  const production = e.NODE_ENV === "production";
  const registered = Boolean(e.APP_ID || privateKey);
  let credentials: Credentials | undefined;
  if (registered || production) {
    if (!e.APP_ID) lines.push("APP_ID is missing: set it to the App's numeric id from its settings page, e.g. 123456");
    if (!privateKey)
      lines.push(
        "PRIVATE_KEY is missing: set PRIVATE_KEY to the App's " +
          "PEM private key, or PRIVATE_KEY_PATH to a file holding it",
      );
    if (!e.WEBHOOK_SECRET) lines.push("WEBHOOK_SECRET is missing: set it to the webhook secret configured on the App");
    if (!e.ORCHESTRA_ADMIN_TOKEN)
      lines.push(
        "ORCHESTRA_ADMIN_TOKEN is missing: set it to a random string of " +
          "at least 32 characters, e.g. the output of: openssl rand -hex 32",
      );
    // /metrics names repositories, private ones too: in production a scrape must prove itself.
    if (production && !e.ORCHESTRA_METRICS_TOKEN)
      lines.push(
        "ORCHESTRA_METRICS_TOKEN is missing: in production /metrics requires a token (it names private " +
          "repositories); set it to a random string of at least 32 characters and give it to the scraper",
      );
    if (lines.length > 0) throw new ConfigError(lines);
    credentials = {
      appId: Number(e.APP_ID),
      privateKey: privateKey!,
      webhookSecret: e.WEBHOOK_SECRET!,
      adminToken: e.ORCHESTRA_ADMIN_TOKEN!,
    };
  }
  const baseUrl = e.GHE_HOST ? `${e.GHE_PROTOCOL}://${e.GHE_HOST}/api/v3` : undefined;
  const dryRun = e.ORCHESTRA_DRY_RUN === "true" || e.ORCHESTRA_DRY_RUN === "1";
  const retention: RetentionPolicy = {
    deliveriesDays: e.ORCHESTRA_RETENTION_DELIVERIES_DAYS,
    effectsDays: e.ORCHESTRA_RETENTION_EFFECTS_DAYS,
    idempotencyHours: e.ORCHESTRA_RETENTION_IDEMPOTENCY_HOURS,
    sweepReportsDays: e.ORCHESTRA_RETENTION_SWEEP_REPORTS_DAYS,
    auditDays: e.ORCHESTRA_RETENTION_AUDIT_DAYS,
    intervalMinutes: e.ORCHESTRA_RETENTION_INTERVAL_MINUTES,
  };
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    baseUrl,
    databaseUrl: e.DATABASE_URL,
    ...(e.WEBHOOK_PROXY_URL ? { webhookProxyUrl: e.WEBHOOK_PROXY_URL } : {}),
    production,
    dryRun,
    npmRegistry: e.ORCHESTRA_NPM_REGISTRY,
    retention,
    retryWindowHours: e.ORCHESTRA_RETRY_WINDOW_HOURS,
    fleetDebounceSeconds: e.ORCHESTRA_FLEET_DEBOUNCE_SECONDS,
    deliveriesSweepSeconds: e.ORCHESTRA_DELIVERIES_SWEEP_SECONDS,
    redeliveriesPerSweep: e.ORCHESTRA_REDELIVERIES_PER_SWEEP,
    metricsToken: e.ORCHESTRA_METRICS_TOKEN,
    credentials,
  };
}
