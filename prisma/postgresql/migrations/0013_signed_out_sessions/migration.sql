-- CreateTable
CREATE TABLE "SignedOutSession" (
    "nonce" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SignedOutSession_pkey" PRIMARY KEY ("nonce")
);

-- CreateIndex
CREATE INDEX "SignedOutSession_expiresAt_idx" ON "SignedOutSession"("expiresAt");
