-- The node ids GraphQL names issues and labels by, as webhooks and label writes gave them: a label swap is one
-- mutation naming them, instead of an add and a removal.
ALTER TABLE "IssueLabelsSeen" ADD COLUMN "nodeId" TEXT;

CREATE TABLE "LabelSeen" (
    "repo" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "seenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LabelSeen_pkey" PRIMARY KEY ("repo","name")
);
