/**
 * Every REST route and GraphQL query the App sends, read from the source,
 * against every supported host's published description: api.github.com,
 * GitHub Enterprise Cloud and each GitHub Enterprise Server release from
 * OLDEST_GHES that @octokit/openapi ships. A route a supported host lacks
 * must be a documented gap (src/github/hosts.ts, docs/github-app.md) with a
 * fallback, or this fails; so does a gap the descriptions contradict. The
 * routes are found by reading the files that use octokit, so a route added
 * there cannot escape the check, and a call the reader does not understand
 * fails it too.
 */
import fs from "node:fs";
import path from "node:path";
import { ProbotOctokit } from "probot";
import { compareVersions, HOST_GAPS, IMPLICIT_ROUTES, OLDEST_GHES } from "../../src/github/hosts.js";
import * as queries from "../../src/github/queries.js";
import { MAX_SWAPS } from "../../src/github/port.js";
import { githubSchema } from "../fake-github/graphql/index.js";
import { validationErrors } from "../fake-github/graphql/validation.js";
import { loadOpenApi, shippedGhesReleases, type Description } from "../fake-github/openapi.js";

const root = path.join(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === "generated" ? [] : sourceFiles(p);
    return d.name.endsWith(".ts") ? [p] : [];
  });
}

interface Use {
  route: string;
  /** file:line of the call */
  at: string;
}

/** The routes and GraphQL queries the App's source sends, and the calls the reader could not place. */
function readSource(): { rest: Use[]; graphql: Array<{ name: string; at: string }>; unread: string[] } {
  const octokit = new ProbotOctokit() as unknown as {
    rest: Record<string, Record<string, { endpoint: { DEFAULTS: { method: string; url: string } } } | undefined>>;
  };
  const rest: Use[] = [];
  const graphql: Array<{ name: string; at: string }> = [];
  const unread: string[] = [];
  // Only modules that hold an octokit reach GitHub (dependency-cruiser keeps octokit behind the port).
  for (const file of sourceFiles(path.join(root, "src")).filter((f) => /Octokit\b/.test(fs.readFileSync(f, "utf8")))) {
    const text = fs.readFileSync(file, "utf8");
    const at = (index: number) => `${path.relative(root, file)}:${text.slice(0, index).split("\n").length}`;
    for (const m of text.matchAll(/\brest\.([a-z]\w*)\.([a-z]\w*)\b/g)) {
      const method = octokit.rest[m[1]!]?.[m[2]!];
      if (!method) unread.push(`${at(m.index)}: rest.${m[1]}.${m[2]} is no octokit REST method`);
      else rest.push({ route: `${method.endpoint.DEFAULTS.method} ${method.endpoint.DEFAULTS.url}`, at: at(m.index) });
    }
    // Every request, paginate and graphql call: a route literal, a REST method, or a query from queries.ts.
    for (const m of text.matchAll(/(?<=\w)\.(request|paginate|graphql)(?:<[^>(]*>)?\(\s*([^,)]*)/g)) {
      const [, verb, arg] = m as unknown as [string, string, string];
      const literal = /^"([A-Z]+ \/[^"]*)"$/.exec(arg.trim());
      if (verb !== "graphql" && literal) rest.push({ route: literal[1]!, at: at(m.index) });
      else if (verb === "paginate" && /^(\w+\.)?rest\.\w+\.\w+$/.test(arg.trim())) continue;
      else if (verb === "graphql" && /^[A-Z][A-Z_]+$/.test(arg.trim()))
        graphql.push({ name: arg.trim(), at: at(m.index) });
      // A document made for its size (label swaps batched), by a function of queries.ts.
      else if (verb === "graphql" && /^[a-z]\w*Document\(/.test(arg.trim()))
        graphql.push({ name: arg.trim().split("(")[0]!, at: at(m.index) });
      else unread.push(`${at(m.index)}: ${verb}(${arg.trim()}) names no route this test can read`);
    }
    for (const m of text.matchAll(/\.config\.get\(/g))
      rest.push({ route: IMPLICIT_ROUTES.find((r) => r.by === "octokit.config.get")!.route, at: at(m.index) });
  }
  for (const r of IMPLICIT_ROUTES.filter((x) => x.by !== "octokit.config.get")) rest.push({ route: r.route, at: r.by });
  return { rest, graphql, unread };
}

const source = readSource();
const routes = [...new Set(source.rest.map((u) => u.route))].sort();
const ghes = shippedGhesReleases().filter((v) => compareVersions(v, OLDEST_GHES) >= 0);
const hosts: Description[] = ["api.github.com", "ghec", ...ghes.map((v) => `ghes-${v}` as Description)];

test("the reader understands every call that reaches GitHub, and finds the ones known to be there", () => {
  expect(source.unread).toEqual([]);
  for (const known of [
    "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
    "GET /meta",
    "GET /app/hook/deliveries",
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
    "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
    "DELETE /installation/token",
    "GET /repos/{owner}/{repo}/contents/{path}",
  ])
    expect(routes).toContain(known);
  expect(source.graphql.length).toBeGreaterThanOrEqual(3);
});

test(`@octokit/openapi ships the descriptions of every supported GitHub Enterprise Server from ${OLDEST_GHES}`, () => {
  expect(ghes[0]).toBe(OLDEST_GHES);
  expect(ghes.length).toBeGreaterThanOrEqual(3);
});

describe.each(hosts.map((h) => [h]))("%s", (host) => {
  const version = host.startsWith("ghes-") ? host.slice(5) : null;
  const lacks = (route: string) => {
    const gap = HOST_GAPS.find((g) => g.routes.includes(route));
    return gap !== undefined && version !== null && compareVersions(version, gap.ghesSince) < 0 ? gap : null;
  };

  test("has every route the App sends, or the App has a documented fallback for it there", () => {
    const index = loadOpenApi(host);
    const problems: string[] = [];
    for (const route of routes) {
      const [method, template] = route.split(" ") as [string, string];
      const has = index.byRoute(method, template) !== undefined;
      const gap = lacks(route);
      const where = source.rest
        .filter((u) => u.route === route)
        .map((u) => u.at)
        .join(", ");
      if (!has && !gap)
        problems.push(`${route} (${where}) is not in ${host}'s description, and HOST_GAPS names no fallback for it`);
      if (has && gap)
        problems.push(`${route} is in ${host}'s description, yet HOST_GAPS says it came in GHES ${gap.ghesSince}`);
    }
    expect(problems).toEqual([]);
  });
});

describe("the gaps", () => {
  const docs = fs.readFileSync(path.join(root, "docs/github-app.md"), "utf8");
  test.each(HOST_GAPS.map((g) => [g.feature, g]))(
    "%s: routes the App sends, documented with their fallback",
    (_f, g) => {
      for (const route of g.routes) {
        expect(routes).toContain(route);
        expect(docs).toContain(`\`${route}\``);
      }
      expect(docs).toContain(`GHES ${g.ghesSince}`);
      expect(docs).toContain(g.fallback);
      // The release before the one that brought it really lacks it (the table is not a guess).
      expect(compareVersions(g.ghesSince, OLDEST_GHES)).toBeGreaterThan(0);
    },
  );
});

describe("GraphQL", () => {
  const exported = (Object.entries(queries) as Array<[string, unknown]>).filter(
    (e): e is [string, string] => typeof e[1] === "string" && /^\s*(query|mutation)\b/.test(e[1]),
  );

  // Documents made for their size, as large as the adapter makes them.
  const made = (Object.entries(queries) as Array<[string, unknown]>).flatMap(([name, f]) =>
    typeof f === "function" && name.endsWith("Document")
      ? [1, 2, MAX_SWAPS].map((n): [string, string] => [name, (f as (n: number) => string)(n)])
      : [],
  );

  test("every query the adapter sends is one of queries.ts, and each validates against GitHub's schema", async () => {
    for (const use of source.graphql) expect([...exported, ...made].map(([n]) => n)).toContain(use.name);
    expect(made.map(([n]) => n)).toContain("swapLabelsDocument");
    const { graphql, schema } = await githubSchema();
    for (const [name, q] of [...exported, ...made])
      expect({ name, errors: validationErrors(graphql, schema, graphql.parse(q)) }).toEqual({ name, errors: [] });
  });
});
