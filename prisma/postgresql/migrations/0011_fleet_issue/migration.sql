-- CreateTable
CREATE TABLE "FleetIssue" (
    "repo" TEXT NOT NULL,
    "installationId" INTEGER NOT NULL,
    "number" INTEGER,
    "writtenAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "FleetIssue_pkey" PRIMARY KEY ("repo")
);

