import { ConfigError, parseEnv } from "../../src/config/env.js";

/** The lines a configuration error names for `env` (none when it parses); `files` stands in for files the settings point to. */
export function errorsOf(env: Record<string, string>, files: Record<string, string> = {}): string[] {
  try {
    parseEnv(env, (p) => {
      if (p in files) return files[p]!;
      throw Object.assign(new Error("nope"), { code: "ENOENT" });
    });
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.lines;
    throw e;
  }
}
