-- AlterTable
ALTER TABLE "Run" ADD COLUMN "credentials" TEXT;

-- CreateTable
CREATE TABLE "RunCredential" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "installationId" INTEGER NOT NULL,
    "repo" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "sealed" TEXT,
    "expiresAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    "note" TEXT
);

-- CreateIndex
CREATE INDEX "RunCredential_runId_idx" ON "RunCredential"("runId");

-- CreateIndex
CREATE INDEX "RunCredential_state_expiresAt_idx" ON "RunCredential"("state", "expiresAt");
