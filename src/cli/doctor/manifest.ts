/**
 * What Orchestra asks of GitHub, as app.yml (the App manifest beside the
 * code) says it: `default_permissions` and `default_events`. The manifest is
 * the one list; doctor compares GitHub's answers against it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
// Probot's own YAML parser (probot depends on it; it reads .github/orchestra.yml the same way).
import { parse } from "yaml";
import { z } from "zod";
import { packageRoot } from "../../paths.js";
import { LEVELS, type Access } from "./compare.js";

const manifest = z.object({
  default_permissions: z.record(z.string(), z.enum(LEVELS, { message: `must be ${LEVELS.join(", ")}` })),
  default_events: z.array(z.string().min(1)),
});

export const manifestPath = (): string => join(packageRoot(), "app.yml");

/** The manifest's permissions and events; an Error that says what is wrong with the file otherwise. */
export function parseManifest(text: string): Access {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`it is not YAML: ${(err as Error).message.split("\n")[0]}`, { cause: err });
  }
  const r = manifest.safeParse(doc);
  if (!r.success)
    throw new Error(r.error.issues.map((i) => `${i.path.join(".") || "the document"} ${i.message}`).join("; "));
  return { permissions: r.data.default_permissions, events: r.data.default_events };
}

export function readManifest(path = manifestPath()): Access {
  return parseManifest(readFileSync(path, "utf8"));
}
