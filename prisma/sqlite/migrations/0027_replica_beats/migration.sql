-- Each running replica beats in its own row; one that stops beating has its claims released to the others.
CREATE TABLE "Replica" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "startedAt" DATETIME NOT NULL,
    "beatAt" DATETIME NOT NULL
);

CREATE INDEX "Replica_beatAt_idx" ON "Replica"("beatAt");
