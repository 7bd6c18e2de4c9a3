-- AlterTable
ALTER TABLE "Delivery" ADD COLUMN     "collapse" TEXT,
ADD COLUMN     "note" TEXT;
