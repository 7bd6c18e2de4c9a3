-- CreateTable
CREATE TABLE "Effect" (
    "seq" SERIAL NOT NULL,
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
    "nextAttemptAt" TIMESTAMP(3) NOT NULL,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "maybeSent" BOOLEAN NOT NULL DEFAULT false,
    "dryRun" BOOLEAN NOT NULL DEFAULT false,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "result" TEXT,
    "note" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "doneAt" TIMESTAMP(3),

    CONSTRAINT "Effect_pkey" PRIMARY KEY ("seq")
);

-- Comments posted once before the outbox existed keep their keys, so they are never posted again.
INSERT INTO "Effect" ("id", "key", "taskId", "installationId", "repo", "kind", "payload", "state", "attempts", "nextAttemptAt", "note", "createdAt", "doneAt")
SELECT 'notice-' || "key", "key", NULL, 0, '', 'comment', '{}', 'done', 1, "createdAt", 'posted before the effects outbox existed', "createdAt", "createdAt" FROM "Notice";

-- Label writes that had not reached GitHub become label effects.
INSERT INTO "Effect" ("id", "key", "taskId", "installationId", "repo", "kind", "payload", "state", "attempts", "nextAttemptAt", "note", "createdAt", "doneAt")
SELECT 'relabel-' || "id", 'label:' || "id" || ':v' || "version", "id", "installationId", "repo", 'label',
  json_build_object('issue', "issue", 'label', "label", 'others', json_build_array('agent:queued', 'agent:in-progress', 'agent:review', 'agent:blocked', 'agent:failed'))::text,
  'pending', 0, "updatedAt", NULL, "updatedAt", NULL FROM "Task" WHERE "labelSynced" = false;

-- DropTable
DROP TABLE "Notice";

-- AlterTable
ALTER TABLE "Task" DROP COLUMN "labelOnGitHub",
DROP COLUMN "labelSynced",
ADD COLUMN     "costUsd" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "inputTokens" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "outputTokens" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "classifyAfter" TIMESTAMP(3),
ADD COLUMN     "classifyFailures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "costUsd" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "inputTokens" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "outputTokens" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "Installation" (
    "id" INTEGER NOT NULL,
    "nextWriteAt" TIMESTAMP(3) NOT NULL,
    "rateLimitedUntil" TIMESTAMP(3),
    "pausedUntil" TIMESTAMP(3),
    "pauseReason" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Installation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TaskLedger" (
    "taskId" TEXT NOT NULL,
    "githubReads" INTEGER NOT NULL DEFAULT 0,
    "githubWrites" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "TaskLedger_pkey" PRIMARY KEY ("taskId")
);

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

