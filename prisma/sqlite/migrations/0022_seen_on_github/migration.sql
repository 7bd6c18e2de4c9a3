-- CreateTable
CREATE TABLE "IssueLabelsSeen" (
    "repo" TEXT NOT NULL,
    "issue" INTEGER NOT NULL,
    "labels" TEXT NOT NULL,
    "seenAt" DATETIME NOT NULL,

    PRIMARY KEY ("repo", "issue")
);

-- CreateTable
CREATE TABLE "CheckRunSeen" (
    "repo" TEXT NOT NULL,
    "headSha" TEXT NOT NULL,
    "checkRunId" BIGINT,
    "seenAt" DATETIME NOT NULL,

    PRIMARY KEY ("repo", "headSha")
);

