-- AlterTable
ALTER TABLE "Worker" ADD COLUMN "pausedUntil" DATETIME;
ALTER TABLE "Worker" ADD COLUMN "pauseReason" TEXT;
ALTER TABLE "Worker" ADD COLUMN "resumedAt" DATETIME;

-- CreateIndex
CREATE INDEX "Run_workerId_endedAt_idx" ON "Run"("workerId", "endedAt");
