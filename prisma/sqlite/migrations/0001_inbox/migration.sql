-- CreateTable
CREATE TABLE "Delivery" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "deliveryId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "action" TEXT,
    "installationId" TEXT,
    "taskKey" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" DATETIME,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "processedAt" DATETIME
);

-- CreateIndex
CREATE UNIQUE INDEX "Delivery_deliveryId_key" ON "Delivery"("deliveryId");

-- CreateIndex
CREATE INDEX "Delivery_state_nextAttemptAt_idx" ON "Delivery"("state", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Delivery_taskKey_seq_idx" ON "Delivery"("taskKey", "seq");

