-- AlterTable
ALTER TABLE "Decision" ADD COLUMN "awaits" TEXT;

-- CreateIndex
CREATE INDEX "Decision_awaits_idx" ON "Decision"("awaits");

-- Questions already waiting on an issue of their task's repository (issue-closed:<n>).
UPDATE "Decision" SET "awaits" = lower(
  (SELECT "repo" FROM "Task" WHERE "Task"."id" = "Decision"."taskId") || '#' || trim(substr("condition", 14))
) WHERE "kind" = 'question' AND "answeredAt" IS NULL AND "condition" LIKE 'issue-closed:%';

-- ... on a pull request named as owner/repo#n (pr-merged:owner/repo#n).
UPDATE "Decision" SET "awaits" = lower(trim(substr("condition", 11)))
WHERE "kind" = 'question' AND "answeredAt" IS NULL AND "condition" LIKE 'pr-merged:%'
  AND "condition" NOT LIKE 'pr-merged:%://%';

-- ... on a pull request named by its URL (pr-merged:https://host/owner/repo/pull/n): owner/repo#n.
UPDATE "Decision" SET "awaits" = lower(replace(rtrim(
  substr(
    substr(trim(substr("condition", 11)), instr(trim(substr("condition", 11)), '://') + 3),
    instr(substr(trim(substr("condition", 11)), instr(trim(substr("condition", 11)), '://') + 3), '/') + 1
  ), '/'), '/pull/', '#'))
WHERE "kind" = 'question' AND "answeredAt" IS NULL AND "condition" LIKE 'pr-merged:%://%';
