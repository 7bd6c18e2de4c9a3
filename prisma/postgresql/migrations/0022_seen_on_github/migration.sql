-- CreateTable
CREATE TABLE "IssueLabelsSeen" (
    "repo" TEXT NOT NULL,
    "issue" INTEGER NOT NULL,
    "labels" TEXT NOT NULL,
    "seenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "IssueLabelsSeen_pkey" PRIMARY KEY ("repo","issue")
);

-- CreateTable
CREATE TABLE "CheckRunSeen" (
    "repo" TEXT NOT NULL,
    "headSha" TEXT NOT NULL,
    "checkRunId" BIGINT,
    "seenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CheckRunSeen_pkey" PRIMARY KEY ("repo","headSha")
);

