-- AlterTable
ALTER TABLE "Worker" ADD COLUMN     "pausedUntil" TIMESTAMP(3),
ADD COLUMN     "pauseReason" TEXT,
ADD COLUMN     "resumedAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Run_workerId_endedAt_idx" ON "Run"("workerId", "endedAt");
