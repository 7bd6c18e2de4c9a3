-- AlterTable
ALTER TABLE "Decision" ADD COLUMN     "awaits" TEXT;

-- CreateIndex
CREATE INDEX "Decision_awaits_idx" ON "Decision"("awaits");

-- Questions already waiting on an issue of their task's repository (issue-closed:<n>).
UPDATE "Decision" AS d SET "awaits" = lower(t."repo" || '#' || btrim(substr(d."condition", 14)))
FROM "Task" AS t
WHERE t."id" = d."taskId" AND d."kind" = 'question' AND d."answeredAt" IS NULL
  AND d."condition" LIKE 'issue-closed:%';

-- ... on a pull request (pr-merged:owner/repo#n or pr-merged:https://host/owner/repo/pull/n): owner/repo#n.
UPDATE "Decision" SET "awaits" = lower(regexp_replace(
  btrim(substr("condition", 11)), '^(?:https?://[^/]+/)?([^/#]+/[^/#]+?)(?:/pull/|#)([0-9]+)/?$', '\1#\2'
)) WHERE "kind" = 'question' AND "answeredAt" IS NULL AND "condition" LIKE 'pr-merged:%';
