-- CreateTable
CREATE TABLE "Worker" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "repos" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "lastSeenAt" TIMESTAMP(3),

    CONSTRAINT "Worker_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Task" (
    "id" TEXT NOT NULL,
    "installationId" INTEGER NOT NULL,
    "repo" TEXT NOT NULL,
    "issue" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "priority" INTEGER NOT NULL DEFAULT 1000,
    "queuedAt" TIMESTAMP(3) NOT NULL,
    "branch" TEXT NOT NULL,
    "continuation" TEXT,
    "prNumber" INTEGER,
    "runId" TEXT,
    "leaseEpoch" TEXT,
    "leaseExpiresAt" TIMESTAMP(3),
    "workerId" TEXT,
    "label" TEXT,
    "labelSynced" BOOLEAN NOT NULL DEFAULT true,
    "labelOnGitHub" TEXT,
    "backoffUntil" TIMESTAMP(3),
    "backoffCount" INTEGER NOT NULL DEFAULT 0,
    "diagnostic" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Task_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Run" (
    "id" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "workerId" TEXT,
    "mode" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "leaseEpoch" TEXT NOT NULL,
    "leaseExpiresAt" TIMESTAMP(3) NOT NULL,
    "branch" TEXT NOT NULL,
    "continuation" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    "endReason" TEXT,
    "report" TEXT,
    "prNumber" INTEGER,
    "headSha" TEXT,
    "class" TEXT,
    "recovery" TEXT,
    "evidence" TEXT,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "workflowRunId" BIGINT,

    CONSTRAINT "Run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CompletionReceipt" (
    "id" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "runId" TEXT,
    "prNumber" INTEGER NOT NULL,
    "mergeSha" TEXT NOT NULL,
    "headSha" TEXT NOT NULL,
    "mergedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CompletionReceipt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Decision" (
    "id" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "runId" TEXT,
    "kind" TEXT NOT NULL,
    "subject" TEXT,
    "body" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "condition" TEXT,
    "source" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "deliveredRunId" TEXT,
    "deliveredAt" TIMESTAMP(3),
    "receiptAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "supersededAt" TIMESTAMP(3),

    CONSTRAINT "Decision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IdempotentResponse" (
    "key" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "IdempotentResponse_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "Notice" (
    "key" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Notice_pkey" PRIMARY KEY ("key")
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

