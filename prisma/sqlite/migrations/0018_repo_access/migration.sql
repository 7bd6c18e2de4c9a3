-- AlterTable
ALTER TABLE "Repo" ADD COLUMN "breakerWhy" TEXT;
ALTER TABLE "Repo" ADD COLUMN "access" TEXT;
