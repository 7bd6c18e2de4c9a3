-- CreateTable
CREATE TABLE "SignedOutSession" (
    "nonce" TEXT NOT NULL PRIMARY KEY,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "SignedOutSession_expiresAt_idx" ON "SignedOutSession"("expiresAt");
