-- AlterTable
ALTER TABLE "Decision" ADD COLUMN "answeredAt" DATETIME;
ALTER TABLE "Decision" ADD COLUMN "headSha" TEXT;

-- CreateTable
CREATE TABLE "DecisionDelivery" (
    "decisionId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "firstAt" DATETIME NOT NULL,
    "lastAt" DATETIME NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 1,
    "receiptAt" DATETIME,

    PRIMARY KEY ("decisionId", "runId")
);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "at" DATETIME NOT NULL,
    "installationId" INTEGER,
    "repo" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "input" TEXT NOT NULL,
    "why" TEXT NOT NULL
);

-- CreateIndex
CREATE INDEX "DecisionDelivery_runId_idx" ON "DecisionDelivery"("runId");

-- CreateIndex
CREATE INDEX "AuditEntry_repo_seq_idx" ON "AuditEntry"("repo", "seq");

