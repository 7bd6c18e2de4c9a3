/**
 * `/health` answers while the process is up; `/ready` only when the database
 * answers and every committed migration is applied, so a load balancer sends
 * no webhook to a replica that would answer it 503.
 */
import type { Database } from "../store/db.js";
import { pendingMigrations } from "../store/migrate.js";
import type { Router } from "../http/router.js";
import { sendJson } from "../http/respond.js";

export function healthRoutes(router: Router, deps: { database: Database; mode: "app" | "setup" }): void {
  router.add("GET", "/health", async ({ res }) => {
    sendJson(res, 200, { status: "ok", mode: deps.mode });
  });

  router.add("GET", "/ready", async ({ res }) => {
    try {
      await deps.database.db.$queryRawUnsafe("SELECT 1");
      const pending = await pendingMigrations(deps.database);
      if (pending.length > 0) {
        sendJson(res, 503, { status: "not ready", reason: `migrations not applied: ${pending.join(", ")}`, database: deps.database.provider });
        return;
      }
      sendJson(res, 200, { status: "ready", database: deps.database.provider, mode: deps.mode });
    } catch (err) {
      sendJson(res, 503, { status: "not ready", reason: `database unreachable: ${err instanceof Error ? err.message.split("\n").pop() : String(err)}`, database: deps.database.provider });
    }
  });
}
