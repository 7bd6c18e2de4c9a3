-- AlterTable
ALTER TABLE "Effect" ADD COLUMN "lane" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "Effect" ADD COLUMN "coalesceKey" TEXT;

-- CreateIndex
CREATE INDEX "Effect_installationId_state_lane_seq_idx" ON "Effect"("installationId", "state", "lane", "seq");

-- CreateIndex
CREATE INDEX "Effect_coalesceKey_state_idx" ON "Effect"("coalesceKey", "state");
