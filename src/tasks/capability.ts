/**
 * Wires the task lifecycle into the service: webhook handlers, the worker
 * and task APIs, and the sweep timer.
 */
import type { Logger } from "pino";
import type { EventRouter } from "../events/router.js";
import type { Router } from "../http/router.js";
import type { Db } from "../store/db.js";
import { workerRoutes } from "../api/workers.js";
import { taskRoutes } from "../api/tasks.js";
import type { ConfigLoader } from "../config/loader.js";
import { CONFIG_PATH } from "../config/loader.js";
import type { Lifecycle } from "./lifecycle.js";

export function registerTasks(deps: { events: EventRouter; api: Router; db: Db; lifecycle: Lifecycle; configs: ConfigLoader; adminToken: string }): void {
  const { events, lifecycle, configs } = deps;
  events.on("issues.labeled", async (ctx) => lifecycle.onIssueLabeled(ctx.payload, ctx.installationId!, await ctx.github(), ctx.deliveryId));
  events.on("issues.unlabeled", async (ctx) => lifecycle.onIssueUnlabeled(ctx.payload, ctx.installationId!));
  events.on("issues.closed", async (ctx) => lifecycle.onIssueClosed(ctx.payload, await ctx.github()));
  events.on(["pull_request.opened", "pull_request.reopened"], async (ctx) => lifecycle.onPullOpened(ctx.payload, await ctx.github()));
  events.on("pull_request.closed", async (ctx) => lifecycle.onPullClosed(ctx.payload, await ctx.github()));
  events.on("workflow_run", async (ctx) => lifecycle.onWorkflowEvent("workflow_run", ctx.payload));
  events.on("workflow_job", async (ctx) => lifecycle.onWorkflowEvent("workflow_job", ctx.payload));
  // A push that touches the config makes the next read fetch it again.
  events.on("push", async (ctx) => {
    const repo = (ctx.payload["repository"] as { full_name?: string } | undefined)?.full_name;
    const commits = Array.isArray(ctx.payload["commits"]) ? (ctx.payload["commits"] as Array<Record<string, string[]>>) : [];
    if (repo && commits.some((c) => [...(c["added"] ?? []), ...(c["modified"] ?? []), ...(c["removed"] ?? [])].includes(CONFIG_PATH))) configs.invalidate(repo);
  });
  workerRoutes(deps.api, { lifecycle, db: deps.db, adminToken: deps.adminToken });
  taskRoutes(deps.api, { db: deps.db, adminToken: deps.adminToken });
}

/** Runs the sweep now and then every `everyMs`, never two at once. */
export function startSweeper(lifecycle: Lifecycle, log: Logger, everyMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = lifecycle
      .sweep()
      .then((r) => {
        if (r.expired || r.dispatched || r.errors) log.info(r, "sweep");
      })
      .catch((err: unknown) => log.error({ err: String(err) }, "sweep failed; next one retries"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  let timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
