-- DropIndex
DROP INDEX "Task_state_installationId_priority_queuedAt_idx";

-- AlterTable
ALTER TABLE "Task" ADD COLUMN "headSha" TEXT;

-- CreateIndex
CREATE INDEX "Task_state_installationId_priority_queuedAt_repo_idx" ON "Task"("state", "installationId", "priority", "queuedAt", "repo");

