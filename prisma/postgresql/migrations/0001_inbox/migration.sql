-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Delivery" (
    "seq" SERIAL NOT NULL,
    "deliveryId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "action" TEXT,
    "installationId" TEXT,
    "taskKey" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "errors" TEXT NOT NULL DEFAULT '[]',
    "processedAt" TIMESTAMP(3),

    CONSTRAINT "Delivery_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "Delivery_deliveryId_key" ON "Delivery"("deliveryId");

-- CreateIndex
CREATE INDEX "Delivery_state_nextAttemptAt_idx" ON "Delivery"("state", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Delivery_taskKey_seq_idx" ON "Delivery"("taskKey", "seq");

