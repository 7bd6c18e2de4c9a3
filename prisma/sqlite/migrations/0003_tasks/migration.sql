-- CreateTable
CREATE TABLE "Worker" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "repos" TEXT,
    "createdAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME
);

-- CreateTable
CREATE TABLE "Task" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "installationId" INTEGER NOT NULL,
    "repo" TEXT NOT NULL,
    "issue" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "priority" INTEGER NOT NULL DEFAULT 1000,
    "queuedAt" DATETIME NOT NULL,
    "branch" TEXT NOT NULL,
    "continuation" TEXT,
    "prNumber" INTEGER,
    "runId" TEXT,
    "leaseEpoch" TEXT,
    "leaseExpiresAt" DATETIME,
    "workerId" TEXT,
    "label" TEXT,
    "labelSynced" BOOLEAN NOT NULL DEFAULT true,
    "labelOnGitHub" TEXT,
    "backoffUntil" DATETIME,
    "backoffCount" INTEGER NOT NULL DEFAULT 0,
    "diagnostic" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Run" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "taskId" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "workerId" TEXT,
    "mode" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "leaseEpoch" TEXT NOT NULL,
    "leaseExpiresAt" DATETIME NOT NULL,
    "branch" TEXT NOT NULL,
    "continuation" TEXT,
    "startedAt" DATETIME NOT NULL,
    "endedAt" DATETIME,
    "endReason" TEXT,
    "report" TEXT,
    "prNumber" INTEGER,
    "headSha" TEXT,
    "class" TEXT,
    "recovery" TEXT,
    "evidence" TEXT,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "workflowRunId" BIGINT
);

-- CreateTable
CREATE TABLE "CompletionReceipt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "taskId" TEXT NOT NULL,
    "runId" TEXT,
    "prNumber" INTEGER NOT NULL,
    "mergeSha" TEXT NOT NULL,
    "headSha" TEXT NOT NULL,
    "mergedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Decision" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "taskId" TEXT NOT NULL,
    "runId" TEXT,
    "kind" TEXT NOT NULL,
    "subject" TEXT,
    "body" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "condition" TEXT,
    "source" TEXT,
    "createdAt" DATETIME NOT NULL,
    "deliveredRunId" TEXT,
    "deliveredAt" DATETIME,
    "receiptAt" DATETIME,
    "expiresAt" DATETIME,
    "supersededAt" DATETIME
);

-- CreateTable
CREATE TABLE "IdempotentResponse" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Notice" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "createdAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "Worker_tokenHash_key" ON "Worker"("tokenHash");

-- CreateIndex
CREATE INDEX "Task_state_priority_queuedAt_idx" ON "Task"("state", "priority", "queuedAt");

-- CreateIndex
CREATE INDEX "Task_state_leaseExpiresAt_idx" ON "Task"("state", "leaseExpiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "Task_repo_issue_key" ON "Task"("repo", "issue");

-- CreateIndex
CREATE INDEX "Run_taskId_attempt_idx" ON "Run"("taskId", "attempt");

-- CreateIndex
CREATE INDEX "Run_state_idx" ON "Run"("state");

-- CreateIndex
CREATE UNIQUE INDEX "CompletionReceipt_taskId_key" ON "CompletionReceipt"("taskId");

-- CreateIndex
CREATE UNIQUE INDEX "Decision_source_key" ON "Decision"("source");

-- CreateIndex
CREATE INDEX "Decision_taskId_idx" ON "Decision"("taskId");

