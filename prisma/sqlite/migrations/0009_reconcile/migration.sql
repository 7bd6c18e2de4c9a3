-- AlterTable
ALTER TABLE "Task" ADD COLUMN "repoId" INTEGER;

-- AlterTable
ALTER TABLE "Installation" ADD COLUMN "deletedAt" DATETIME;
ALTER TABLE "Installation" ADD COLUMN "suspendedAt" DATETIME;

-- CreateTable
CREATE TABLE "Checkpoint" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "value" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Redelivery" (
    "guid" TEXT NOT NULL PRIMARY KEY,
    "event" TEXT,
    "requestedAt" DATETIME NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "lastError" TEXT
);

-- CreateTable
CREATE TABLE "SweepReport" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "kind" TEXT NOT NULL,
    "at" DATETIME NOT NULL,
    "installationId" INTEGER,
    "counts" TEXT NOT NULL,
    "detail" TEXT
);

-- CreateIndex
CREATE INDEX "SweepReport_kind_seq_idx" ON "SweepReport"("kind", "seq");

