-- CreateTable
CREATE TABLE "FleetIssue" (
    "repo" TEXT NOT NULL PRIMARY KEY,
    "installationId" INTEGER NOT NULL,
    "number" INTEGER,
    "writtenAt" DATETIME,
    "updatedAt" DATETIME NOT NULL
);

