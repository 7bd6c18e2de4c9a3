-- CreateIndex
CREATE INDEX "Decision_answeredAt_expiresAt_idx" ON "Decision"("answeredAt", "expiresAt");

-- Questions close when their task leaves blocked or claimed. Those left open before that rule (their task
-- moved on, or a claimed task's run is not the one that asked) close at their task's last change.
UPDATE "Decision" SET "answeredAt" = (SELECT "updatedAt" FROM "Task" WHERE "Task"."id" = "Decision"."taskId")
WHERE "kind" = 'question' AND "answeredAt" IS NULL AND "taskId" IN (
  SELECT "id" FROM "Task" WHERE "state" NOT IN ('blocked', 'claimed')
  OR ("state" = 'claimed' AND ("runId" IS NULL OR "runId" IS NOT "Decision"."runId"))
);
