-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "blockedBy" TEXT,
ADD COLUMN     "blockersAt" TIMESTAMP(3),
ADD COLUMN     "freeRequeues" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "progress" TEXT,
ADD COLUMN     "progressAt" TIMESTAMP(3),
ADD COLUMN     "stalled" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "Repo" (
    "id" TEXT NOT NULL,
    "installationId" INTEGER NOT NULL,
    "owner" TEXT NOT NULL,
    "configProblems" TEXT,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "dispatch" BOOLEAN NOT NULL DEFAULT false,
    "maxPerRepo" INTEGER NOT NULL,
    "maxPerOrg" INTEGER NOT NULL,
    "configAt" TIMESTAMP(3) NOT NULL,
    "breakerClass" TEXT,
    "breakerRuns" TEXT,
    "breakerOpenedAt" TIMESTAMP(3),
    "breakerUntil" TIMESTAMP(3),
    "breakerTrips" INTEGER NOT NULL DEFAULT 0,
    "probeRunId" TEXT,
    "breakerClosedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Repo_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Pause" (
    "scope" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "by" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Pause_pkey" PRIMARY KEY ("scope")
);

-- CreateIndex
CREATE INDEX "Repo_installationId_idx" ON "Repo"("installationId");

-- CreateIndex
CREATE INDEX "Repo_owner_idx" ON "Repo"("owner");

-- CreateIndex
CREATE INDEX "Task_state_installationId_priority_queuedAt_idx" ON "Task"("state", "installationId", "priority", "queuedAt");

-- CreateIndex
CREATE INDEX "Run_endedAt_idx" ON "Run"("endedAt");

