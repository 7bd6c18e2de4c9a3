-- DropIndex
DROP INDEX "Delivery_state_nextAttemptAt_idx";

-- CreateIndex
CREATE INDEX "Delivery_state_seq_idx" ON "Delivery"("state", "seq");

