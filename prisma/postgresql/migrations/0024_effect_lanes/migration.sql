-- AlterTable
ALTER TABLE "Effect" ADD COLUMN     "lane" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "coalesceKey" TEXT;

-- CreateIndex
CREATE INDEX "Effect_installationId_state_lane_createdAt_idx" ON "Effect"("installationId", "state", "lane", "createdAt");

-- CreateIndex
CREATE INDEX "Effect_coalesceKey_state_idx" ON "Effect"("coalesceKey", "state");
