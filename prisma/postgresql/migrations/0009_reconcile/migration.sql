-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "repoId" INTEGER;

-- AlterTable
ALTER TABLE "Installation" ADD COLUMN     "deletedAt" TIMESTAMP(3),
ADD COLUMN     "suspendedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "Checkpoint" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Checkpoint_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "Redelivery" (
    "guid" TEXT NOT NULL,
    "event" TEXT,
    "requestedAt" TIMESTAMP(3) NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "lastError" TEXT,

    CONSTRAINT "Redelivery_pkey" PRIMARY KEY ("guid")
);

-- CreateTable
CREATE TABLE "SweepReport" (
    "seq" SERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "installationId" INTEGER,
    "counts" TEXT NOT NULL,
    "detail" TEXT,

    CONSTRAINT "SweepReport_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE INDEX "SweepReport_kind_seq_idx" ON "SweepReport"("kind", "seq");

