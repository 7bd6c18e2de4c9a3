-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "credentials" TEXT;

-- CreateTable
CREATE TABLE "RunCredential" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "installationId" INTEGER NOT NULL,
    "repo" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "sealed" TEXT,
    "expiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "note" TEXT,

    CONSTRAINT "RunCredential_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RunCredential_runId_idx" ON "RunCredential"("runId");

-- CreateIndex
CREATE INDEX "RunCredential_state_expiresAt_idx" ON "RunCredential"("state", "expiresAt");
