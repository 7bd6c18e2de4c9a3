-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "recoveredAt" TIMESTAMP(3);

