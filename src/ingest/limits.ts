/**
 * Ingest limits from the environment. `ORCHESTRA_INGEST_BUFFER_MB` caps the
 * megabytes held at once for webhook bodies whose signature is not checked
 * yet (default 64). An eighth of it is kept for the first megabyte of each
 * body, so it cannot be below 29 MB: GitHub's 25 MB payload cap must fit in
 * the rest, or a legitimate large delivery could never be admitted.
 */
import { ConfigError } from "../config/env.js";
import { DEFAULT_UNVERIFIED_BYTES, MAX_PAYLOAD } from "./webhook.js";

export const INGEST_BUFFER_VAR = "ORCHESTRA_INGEST_BUFFER_MB";
const MB = 1024 * 1024;
const MIN_MB = Math.ceil((MAX_PAYLOAD / MB) * (8 / 7));
const MAX_MB = 4096;

export interface IngestLimits {
  maxUnverifiedBytes: number;
}

export function ingestLimits(env: NodeJS.ProcessEnv): IngestLimits {
  const raw = env[INGEST_BUFFER_VAR];
  if (raw === undefined || raw === "") return { maxUnverifiedBytes: DEFAULT_UNVERIFIED_BYTES };
  const mb = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(mb >= MIN_MB && mb <= MAX_MB)) {
    throw new ConfigError([
      `${INGEST_BUFFER_VAR} must be a whole number of megabytes from ${MIN_MB} (GitHub's 25 MB payload cap ` +
        `and the reserve for small bodies) ` +
        `to ${MAX_MB}, e.g. ${DEFAULT_UNVERIFIED_BYTES / MB} (got "${raw}")`,
    ]);
  }
  return { maxUnverifiedBytes: mb * MB };
}
