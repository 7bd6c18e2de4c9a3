-- DropIndex
DROP INDEX "Delivery_taskKey_seq_idx";

-- AlterTable
ALTER TABLE "Delivery" ADD COLUMN "head" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "Delivery_head_seq_idx" ON "Delivery"("head", "seq");

-- CreateIndex
CREATE INDEX "Delivery_taskKey_state_seq_idx" ON "Delivery"("taskKey", "state", "seq");

-- Backfill: the oldest open delivery of each task key is its head
UPDATE "Delivery" SET "head" = true WHERE "state" IN ('pending', 'processing') AND NOT EXISTS (SELECT 1 FROM "Delivery" e WHERE e."taskKey" = "Delivery"."taskKey" AND e."state" IN ('pending', 'processing') AND e."seq" < "Delivery"."seq");
