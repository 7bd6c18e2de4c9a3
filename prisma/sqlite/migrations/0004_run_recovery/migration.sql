-- AlterTable
ALTER TABLE "Run" ADD COLUMN "recoveredAt" DATETIME;

