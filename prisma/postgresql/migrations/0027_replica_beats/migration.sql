-- Each running replica beats in its own row; one that stops beating has its claims released to the others.
CREATE TABLE "Replica" (
    "id" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "beatAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Replica_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "Replica_beatAt_idx" ON "Replica"("beatAt");
