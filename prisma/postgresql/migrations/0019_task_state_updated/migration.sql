-- CreateIndex
CREATE INDEX "Task_state_updatedAt_idx" ON "Task"("state", "updatedAt");
