-- CreateTable
CREATE TABLE "Repo" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "installationId" INTEGER NOT NULL,
    "owner" TEXT NOT NULL,
    "configProblems" TEXT,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "dispatch" BOOLEAN NOT NULL DEFAULT false,
    "maxPerRepo" INTEGER NOT NULL,
    "maxPerOrg" INTEGER NOT NULL,
    "configAt" DATETIME NOT NULL,
    "breakerClass" TEXT,
    "breakerRuns" TEXT,
    "breakerOpenedAt" DATETIME,
    "breakerUntil" DATETIME,
    "breakerTrips" INTEGER NOT NULL DEFAULT 0,
    "probeRunId" TEXT,
    "breakerClosedAt" DATETIME,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Pause" (
    "scope" TEXT NOT NULL PRIMARY KEY,
    "reason" TEXT NOT NULL,
    "by" TEXT NOT NULL,
    "at" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Task" (
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
    "backoffUntil" DATETIME,
    "backoffCount" INTEGER NOT NULL DEFAULT 0,
    "diagnostic" TEXT,
    "blockedBy" TEXT,
    "blockersAt" DATETIME,
    "freeRequeues" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "costUsd" REAL NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Task" ("attempt", "backoffCount", "backoffUntil", "body", "branch", "continuation", "costUsd", "createdAt", "diagnostic", "id", "inputTokens", "installationId", "issue", "label", "leaseEpoch", "leaseExpiresAt", "outputTokens", "prNumber", "priority", "queuedAt", "repo", "runId", "state", "title", "updatedAt", "version", "workerId") SELECT "attempt", "backoffCount", "backoffUntil", "body", "branch", "continuation", "costUsd", "createdAt", "diagnostic", "id", "inputTokens", "installationId", "issue", "label", "leaseEpoch", "leaseExpiresAt", "outputTokens", "prNumber", "priority", "queuedAt", "repo", "runId", "state", "title", "updatedAt", "version", "workerId" FROM "Task";
DROP TABLE "Task";
ALTER TABLE "new_Task" RENAME TO "Task";
CREATE INDEX "Task_state_priority_queuedAt_idx" ON "Task"("state", "priority", "queuedAt");
CREATE INDEX "Task_state_installationId_priority_queuedAt_idx" ON "Task"("state", "installationId", "priority", "queuedAt");
CREATE INDEX "Task_state_leaseExpiresAt_idx" ON "Task"("state", "leaseExpiresAt");
CREATE UNIQUE INDEX "Task_repo_issue_key" ON "Task"("repo", "issue");
CREATE TABLE "new_Run" (
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
    "recoveredAt" DATETIME,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "workflowRunId" BIGINT,
    "classifyAfter" DATETIME,
    "classifyFailures" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "costUsd" REAL NOT NULL DEFAULT 0,
    "progress" TEXT,
    "progressAt" DATETIME,
    "stalled" BOOLEAN NOT NULL DEFAULT false
);
INSERT INTO "new_Run" ("attempt", "branch", "class", "classifyAfter", "classifyFailures", "continuation", "costUsd", "endReason", "endedAt", "errors", "evidence", "headSha", "id", "inputTokens", "leaseEpoch", "leaseExpiresAt", "mode", "outputTokens", "prNumber", "recoveredAt", "recovery", "report", "startedAt", "state", "taskId", "workerId", "workflowRunId") SELECT "attempt", "branch", "class", "classifyAfter", "classifyFailures", "continuation", "costUsd", "endReason", "endedAt", "errors", "evidence", "headSha", "id", "inputTokens", "leaseEpoch", "leaseExpiresAt", "mode", "outputTokens", "prNumber", "recoveredAt", "recovery", "report", "startedAt", "state", "taskId", "workerId", "workflowRunId" FROM "Run";
DROP TABLE "Run";
ALTER TABLE "new_Run" RENAME TO "Run";
CREATE INDEX "Run_taskId_attempt_idx" ON "Run"("taskId", "attempt");
CREATE INDEX "Run_state_idx" ON "Run"("state");
CREATE INDEX "Run_endedAt_idx" ON "Run"("endedAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "Repo_installationId_idx" ON "Repo"("installationId");

-- CreateIndex
CREATE INDEX "Repo_owner_idx" ON "Repo"("owner");

