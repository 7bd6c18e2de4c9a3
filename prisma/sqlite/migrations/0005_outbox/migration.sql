-- CreateTable
CREATE TABLE "Effect" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "taskId" TEXT,
    "runId" TEXT,
    "installationId" INTEGER NOT NULL,
    "repo" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "lockedBy" TEXT,
    "lockedUntil" DATETIME,
    "maybeSent" BOOLEAN NOT NULL DEFAULT false,
    "dryRun" BOOLEAN NOT NULL DEFAULT false,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "result" TEXT,
    "note" TEXT,
    "createdAt" DATETIME NOT NULL,
    "doneAt" DATETIME
);

-- Comments posted once before the outbox existed keep their keys, so they are never posted again.
INSERT INTO "Effect" ("id", "key", "taskId", "installationId", "repo", "kind", "payload", "state", "attempts", "nextAttemptAt", "note", "createdAt", "doneAt")
SELECT 'notice-' || "key", "key", NULL, 0, '', 'comment', '{}', 'done', 1, "createdAt", 'posted before the effects outbox existed', "createdAt", "createdAt" FROM "Notice";

-- Label writes that had not reached GitHub become label effects.
INSERT INTO "Effect" ("id", "key", "taskId", "installationId", "repo", "kind", "payload", "state", "attempts", "nextAttemptAt", "note", "createdAt", "doneAt")
SELECT 'relabel-' || "id", 'label:' || "id" || ':v' || "version", "id", "installationId", "repo", 'label',
  json_object('issue', "issue", 'label', "label", 'others', json('["agent:queued","agent:in-progress","agent:review","agent:blocked","agent:failed"]')),
  'pending', 0, "updatedAt", NULL, "updatedAt", NULL FROM "Task" WHERE "labelSynced" = 0;

-- DropTable
PRAGMA foreign_keys=off;
DROP TABLE "Notice";
PRAGMA foreign_keys=on;

-- CreateTable
CREATE TABLE "Installation" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "nextWriteAt" DATETIME NOT NULL,
    "rateLimitedUntil" DATETIME,
    "pausedUntil" DATETIME,
    "pauseReason" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "TaskLedger" (
    "taskId" TEXT NOT NULL PRIMARY KEY,
    "githubReads" INTEGER NOT NULL DEFAULT 0,
    "githubWrites" INTEGER NOT NULL DEFAULT 0
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
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "costUsd" REAL NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Task" ("attempt", "backoffCount", "backoffUntil", "body", "branch", "continuation", "createdAt", "diagnostic", "id", "installationId", "issue", "label", "leaseEpoch", "leaseExpiresAt", "prNumber", "priority", "queuedAt", "repo", "runId", "state", "title", "updatedAt", "version", "workerId") SELECT "attempt", "backoffCount", "backoffUntil", "body", "branch", "continuation", "createdAt", "diagnostic", "id", "installationId", "issue", "label", "leaseEpoch", "leaseExpiresAt", "prNumber", "priority", "queuedAt", "repo", "runId", "state", "title", "updatedAt", "version", "workerId" FROM "Task";
DROP TABLE "Task";
ALTER TABLE "new_Task" RENAME TO "Task";
CREATE INDEX "Task_state_priority_queuedAt_idx" ON "Task"("state", "priority", "queuedAt");
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
    "costUsd" REAL NOT NULL DEFAULT 0
);
INSERT INTO "new_Run" ("attempt", "branch", "class", "continuation", "endReason", "endedAt", "errors", "evidence", "headSha", "id", "leaseEpoch", "leaseExpiresAt", "mode", "prNumber", "recoveredAt", "recovery", "report", "startedAt", "state", "taskId", "workerId", "workflowRunId") SELECT "attempt", "branch", "class", "continuation", "endReason", "endedAt", "errors", "evidence", "headSha", "id", "leaseEpoch", "leaseExpiresAt", "mode", "prNumber", "recoveredAt", "recovery", "report", "startedAt", "state", "taskId", "workerId", "workflowRunId" FROM "Run";
DROP TABLE "Run";
ALTER TABLE "new_Run" RENAME TO "Run";
CREATE INDEX "Run_taskId_attempt_idx" ON "Run"("taskId", "attempt");
CREATE INDEX "Run_state_idx" ON "Run"("state");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "Effect_id_key" ON "Effect"("id");

-- CreateIndex
CREATE UNIQUE INDEX "Effect_key_key" ON "Effect"("key");

-- CreateIndex
CREATE INDEX "Effect_state_nextAttemptAt_idx" ON "Effect"("state", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Effect_installationId_state_nextAttemptAt_idx" ON "Effect"("installationId", "state", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "Effect_taskId_seq_idx" ON "Effect"("taskId", "seq");

