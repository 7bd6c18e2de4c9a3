/**
 * A fleet in every state the dashboard shows, built through the App itself
 * (signed webhooks, the worker API, the fake GitHub): a failed task (a
 * phantom with one attempt allowed), a blocked one (the agent's question),
 * a live lease, three queued, and one parked delivery and one parked effect
 * (rows the App wrote, marked parked as the executor and processor would
 * after their retries ran out).
 */
import { eventually } from "./orchestra.js";
import { REPO, type Rig } from "./lifecycle-rig.js";

export interface SeededFleet {
  failed: { id: string; issue: number };
  blocked: { id: string; issue: number; question: string };
  leased: { id: string; issue: number; runId: string; workerId: string };
  queued: Array<{ id: string; issue: number }>;
  parkedDelivery: string;
  parkedEffect: string;
}

export const QUESTION = "Should the v1 API stay backwards compatible?";

/** Call before the first delivery (the App caches a repository's configuration). */
export function fleetConfig(rig: Rig): void {
  rig.config("limits: { maxAttempts: 1 }\n");
}

export async function seedFleet(rig: Rig): Promise<SeededFleet> {
  const db = rig.app.database.db;
  const idOf = async (issue: number) =>
    (await db.task.findUniqueOrThrow({ where: { repo_issue: { repo: REPO, issue } } })).id;
  for (const n of [1, 2, 3]) await rig.queue(n);
  const w = await rig.worker("builder-1");

  const phantom = (await w.claim()).body.run;
  expect((await w.exit(phantom.id, { leaseEpoch: phantom.leaseEpoch, exitCode: 0 })).body).toMatchObject({
    class: "phantom",
  });
  const asks = (await w.claim()).body.run;
  expect((await w.exit(asks.id, { leaseEpoch: asks.leaseEpoch, exitCode: 0, question: QUESTION })).body).toMatchObject({
    class: "question",
  });
  const live = (await w.claim()).body.run;
  for (const n of [4, 5, 6]) await rig.queue(n);
  await rig.settle();

  const failedId = await idOf(1);
  expect((await db.task.findUniqueOrThrow({ where: { id: failedId } })).state).toBe("failed");
  const comment = await eventually(
    async () =>
      (await db.effect.findFirst({ where: { taskId: failedId, kind: "comment", state: "done" } })) ?? undefined,
    10_000,
    "the failed comment posted",
  );
  await db.effect.update({
    where: { id: comment.id },
    data: { state: "parked", attempts: 5, note: "GitHub answered 422 five times; replay it once the cause is fixed" },
  });
  const delivery = await db.delivery.findFirstOrThrow({ where: { state: "done" }, orderBy: { seq: "desc" } });
  await db.delivery.update({
    where: { deliveryId: delivery.deliveryId },
    data: {
      state: "parked",
      attempts: 5,
      errors: JSON.stringify([{ at: new Date().toISOString(), class: "github-422", message: "Validation Failed" }]),
    },
  });

  return {
    failed: { id: failedId, issue: 1 },
    blocked: { id: await idOf(2), issue: 2, question: QUESTION },
    leased: { id: await idOf(3), issue: 3, runId: live.id, workerId: w.id },
    queued: await Promise.all([4, 5, 6].map(async (issue) => ({ id: await idOf(issue), issue }))),
    parkedDelivery: delivery.deliveryId,
    parkedEffect: comment.id,
  };
}
