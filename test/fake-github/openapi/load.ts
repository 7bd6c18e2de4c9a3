/**
 * Loading a host's description, with a per-realm memo and an on-disk cache
 * shared by processes.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { buildIndex } from "./build.js";
import { OpenApiIndex } from "./lookup.js";
import { INDEX_FORMAT, type IndexFile } from "./types.js";

/**
 * The descriptions @octokit/openapi ships, by host: `api.github.com`, `ghec`
 * (GitHub Enterprise Cloud) and `ghes-<major>.<minor>` (GitHub Enterprise
 * Server releases).
 */
export type Description = "api.github.com" | "ghec" | `ghes-${number}.${number}`;

const memo = new Map<Description, OpenApiIndex>();

/** The descriptions of GitHub Enterprise Server releases @octokit/openapi ships, oldest first. */
export function shippedGhesReleases(): string[] {
  const dir = path.dirname(resolveSpecPath("api.github.com"));
  const versions = fs
    .readdirSync(dir)
    .map((f) => /^ghes-(\d+\.\d+)\.json$/.exec(f)?.[1])
    .filter((v): v is string => v !== undefined);
  const key = (v: string) => v.split(".").map(Number) as [number, number];
  return versions.sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1]);
}

export function loadOpenApi(description: Description = "api.github.com"): OpenApiIndex {
  const known = memo.get(description);
  if (known) return known;
  const specPath = resolveSpecPath(description);
  const stat = fs.statSync(specPath);
  const source = `${description}:${stat.size}:${Math.trunc(stat.mtimeMs)}:${INDEX_FORMAT}`;
  const cachePath = path.join(
    cacheDir(specPath),
    `openapi-index-${createHash("sha1").update(source).digest("hex").slice(0, 12)}.json`,
  );
  let file: IndexFile | null = null;
  try {
    const cached = JSON.parse(fs.readFileSync(cachePath, "utf8")) as IndexFile;
    if (cached.format === INDEX_FORMAT && cached.source === source) file = cached;
  } catch {
    // absent or unreadable: rebuild below
  }
  if (!file) {
    file = buildIndex(JSON.parse(fs.readFileSync(specPath, "utf8")), source);
    try {
      fs.mkdirSync(path.dirname(cachePath), { recursive: true });
      // parallel Jest workers may race: write aside, then rename atomically
      const tmp = `${cachePath}.${process.pid}.${Date.now()}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(file));
      fs.renameSync(tmp, cachePath);
    } catch {
      // a read-only checkout still works, only slower
    }
  }
  const index = new OpenApiIndex(file);
  memo.set(description, index);
  return index;
}

function resolveSpecPath(description: Description): string {
  const require = createRequire(import.meta.url);
  return require.resolve(`@octokit/openapi/generated/${description}.json`);
}

function cacheDir(specPath: string): string {
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = specPath.lastIndexOf(marker);
  const root = at >= 0 ? specPath.slice(0, at + marker.length) : path.join(process.cwd(), "node_modules/");
  return path.join(root, ".cache", "fake-github");
}
