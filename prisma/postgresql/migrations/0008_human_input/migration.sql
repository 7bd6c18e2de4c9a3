-- AlterTable
ALTER TABLE "Decision" ADD COLUMN     "answeredAt" TIMESTAMP(3),
ADD COLUMN     "headSha" TEXT;

-- CreateTable
CREATE TABLE "DecisionDelivery" (
    "decisionId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "firstAt" TIMESTAMP(3) NOT NULL,
    "lastAt" TIMESTAMP(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 1,
    "receiptAt" TIMESTAMP(3),

    CONSTRAINT "DecisionDelivery_pkey" PRIMARY KEY ("decisionId","runId")
);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "seq" SERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "installationId" INTEGER,
    "repo" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "input" TEXT NOT NULL,
    "why" TEXT NOT NULL,

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE INDEX "DecisionDelivery_runId_idx" ON "DecisionDelivery"("runId");

-- CreateIndex
CREATE INDEX "AuditEntry_repo_seq_idx" ON "AuditEntry"("repo", "seq");

