-- AlterTable
ALTER TABLE "Delivery" ADD COLUMN "collapse" TEXT;
ALTER TABLE "Delivery" ADD COLUMN "note" TEXT;
