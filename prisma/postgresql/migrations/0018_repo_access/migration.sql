-- AlterTable
ALTER TABLE "Repo" ADD COLUMN     "breakerWhy" TEXT,
ADD COLUMN     "access" TEXT;
