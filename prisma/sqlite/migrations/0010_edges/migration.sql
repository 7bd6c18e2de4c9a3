-- AlterTable
ALTER TABLE "Delivery" ADD COLUMN "firstFailedAt" DATETIME;

-- CreateTable
CREATE TABLE "Counter" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "value" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Worker" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "repos" TEXT,
    "createdAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME,
    "tokenHint" TEXT NOT NULL DEFAULT '',
    "revokedAt" DATETIME,
    "rotatedAt" DATETIME
);
INSERT INTO "new_Worker" ("createdAt", "id", "lastSeenAt", "name", "repos", "tokenHash") SELECT "createdAt", "id", "lastSeenAt", "name", "repos", "tokenHash" FROM "Worker";
DROP TABLE "Worker";
ALTER TABLE "new_Worker" RENAME TO "Worker";
CREATE UNIQUE INDEX "Worker_tokenHash_key" ON "Worker"("tokenHash");
CREATE TABLE "new_IdempotentResponse" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "bodyHash" TEXT NOT NULL DEFAULT '',
    "state" TEXT NOT NULL DEFAULT 'done',
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);
INSERT INTO "new_IdempotentResponse" ("body", "createdAt", "key", "status") SELECT "body", "createdAt", "key", "status" FROM "IdempotentResponse";
DROP TABLE "IdempotentResponse";
ALTER TABLE "new_IdempotentResponse" RENAME TO "IdempotentResponse";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

