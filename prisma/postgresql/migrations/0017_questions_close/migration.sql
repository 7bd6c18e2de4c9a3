-- CreateIndex
CREATE INDEX "Decision_answeredAt_expiresAt_idx" ON "Decision"("answeredAt", "expiresAt");

-- Questions close when their task leaves blocked or claimed. Those left open before that rule (their task
-- moved on, or a claimed task's run is not the one that asked) close at their task's last change.
UPDATE "Decision" AS d SET "answeredAt" = t."updatedAt"
FROM "Task" AS t
WHERE t."id" = d."taskId" AND d."kind" = 'question' AND d."answeredAt" IS NULL
  AND (t."state" NOT IN ('blocked', 'claimed')
    OR (t."state" = 'claimed' AND (t."runId" IS NULL OR t."runId" IS DISTINCT FROM d."runId")));
