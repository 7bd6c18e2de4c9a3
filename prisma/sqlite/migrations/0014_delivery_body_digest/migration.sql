-- AlterTable
ALTER TABLE "Delivery" ADD COLUMN "bodyDigest" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Delivery_bodyDigest_key" ON "Delivery"("bodyDigest");
