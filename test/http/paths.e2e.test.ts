/**
 * Bad paths through the real server: every route with a parameter, as the
 * API registers it (so a route added later is covered too), answers a
 * malformed `%` escape or a control character with 400 and an unknown id
 * with a 4xx that names it — never a 500. On PostgreSQL a NUL in a text
 * parameter is refused by the server, which is how a bad id used to become
 * a 500.
 */
import { Router } from "../../src/http/router.js";
import { registerApi, type ApiDeps } from "../../src/api/index.js";
import { dashboardRoutes, type DashboardDeps } from "../../src/dashboard/routes.js";
import { healthRoutes } from "../../src/health/routes.js";
import type { Database } from "../../src/store/db.js";
import { providers, testDatabase, type TestDb } from "../support/databases.js";
import { startOrchestra, type Running } from "../support/orchestra.js";

/** The routes as registered: `:name` parameters marked. */
function registeredRoutes(): Array<{ method: string; path: string }> {
  const router = new Router();
  registerApi(router, {} as ApiDeps);
  dashboardRoutes(router, {} as DashboardDeps);
  healthRoutes(router, { database: { provider: "sqlite" } as Database });
  return router.routes();
}

const withParams = registeredRoutes().filter((r) => r.path.includes("/:"));

/** The route's path with every parameter replaced by `value` (already escaped as it goes on the wire). */
const fill = (path: string, value: string) => path.replace(/:[a-zA-Z]+/g, value);

describe.each(providers)("paths on %s", (provider) => {
  let db: TestDb;
  let app: Running;
  let workerToken: string;

  beforeAll(async () => {
    db = await testDatabase(provider, { migrated: true });
    app = await startOrchestra({ db });
    const res = await app.admin("/api/v1/workers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "paths" }),
    });
    expect(res.status).toBe(201);
    workerToken = ((await res.json()) as { token: string }).token;
  });
  afterAll(async () => {
    await app.stop();
    await db.drop();
  });

  const call = async (method: string, path: string, token: string) => {
    const res = await fetch(app.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(method === "GET" ? {} : { body: JSON.stringify({ leaseEpoch: "1", exitCode: 0, question: "q?" }) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as { error?: string }) : null };
  };

  test("the API has routes with parameters to check", () => {
    expect(withParams.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        "GET /api/v1/tasks/:id",
        "POST /api/v1/deliveries/:id/replay",
        "POST /api/v1/effects/:id/replay",
        "POST /api/v1/runs/:id/exit",
      ]),
    );
  });

  const malformedEscapes = [
    ["a truncated escape", "%E0%A4%A"],
    ["a non-hex escape", "%zz"],
    ["a lone %", "%"],
    ["an overlong encoding", "%C0%AF"],
    ["an encoded surrogate half", "%ED%A0%80"],
  ];

  test.each(malformedEscapes)(
    "%s → 400 naming the malformed path, as admin and as a worker",
    async (_name, segment) => {
      for (const route of withParams) {
        for (const token of [app.adminToken, workerToken]) {
          const r = await call(route.method, fill(route.path, segment), token);
          expect({ route: `${route.method} ${route.path}`, status: r.status }).toEqual({
            route: `${route.method} ${route.path}`,
            status: 400,
          });
          expect(r.body?.error).toMatch(
            /^malformed path: the [a-zA-Z]+ segment .* % escape that is not valid UTF-8; escape a literal % as %25$/,
          );
        }
      }
    },
  );

  test.each([
    ["NUL", "abc%00def", "U+0000"],
    ["a newline", "abc%0Adef", "U+000A"],
    ["DEL", "%7F", "U+007F"],
  ])("an id with %s → 400 naming the character", async (_name, segment, code) => {
    for (const route of withParams) {
      for (const token of [app.adminToken, workerToken]) {
        const r = await call(route.method, fill(route.path, segment), token);
        expect(r.status).toBe(400);
        expect(r.body?.error).toContain(`contains the control character ${code}`);
      }
    }
  });

  test("a control character in a query value → 400, not a database error", async () => {
    for (const path of ["/api/v1/tasks?repo=a%00b", "/api/v1/effects?task=%00", "/api/v1/audit?repo=%01"]) {
      const r = await call("GET", path, app.adminToken);
      expect(r.status).toBe(400);
      expect(r.body?.error).toMatch(
        /^malformed query: the parameter "(repo|task)" contains the control character U\+000[01]$/,
      );
    }
  });

  test.each([
    ["a plain unknown id", "no-such-id"],
    ["a long id", "x".repeat(2000)],
    ["unicode", encodeURIComponent("タスク-ü-😀")],
    ["an escaped slash and quote", "a%2Fb%22c"],
  ])("%s → a 4xx with a reason, never a 5xx", async (_name, segment) => {
    // The dashboard's pages answer people, not API clients: its unknown ids are in test/dashboard/pages.e2e.test.ts.
    for (const route of withParams.filter((r) => r.path.startsWith("/api/"))) {
      const token = route.path.startsWith("/api/v1/runs/") ? workerToken : app.adminToken;
      const r = await call(route.method, fill(route.path, segment), token);
      expect({ route: `${route.method} ${route.path}`, status: r.status >= 400 && r.status < 500 }).toEqual({
        route: `${route.method} ${route.path}`,
        status: true,
      });
      expect(typeof r.body?.error).toBe("string");
    }
    const task = await call("GET", `/api/v1/tasks/${segment}`, app.adminToken);
    expect(task.status).toBe(404);
    expect(task.body?.error).toBe(`no task ${decodeURIComponent(segment)}`);
    const effect = await call("POST", `/api/v1/effects/${segment}/replay`, app.adminToken);
    expect(effect.status).toBe(404);
    expect(effect.body?.error).toBe(
      `no effect ${decodeURIComponent(segment)}; list them with orchestra effects --state parked`,
    );
    const run = await call("POST", `/api/v1/runs/${segment}/exit`, workerToken);
    expect(run.status).toBe(404);
    expect(run.body?.error).toBe(`no run ${decodeURIComponent(segment)}`);
  });

  test("nothing above was logged as a failed request", () => {
    expect(app.logs.filter((l) => l["msg"] === "api: request failed")).toEqual([]);
  });
});
