-- The newest delivery of one event about a key is found in the index, not by reading every delivery of the key
-- (a hot issue or pull request has thousands).
CREATE INDEX "Delivery_taskKey_event_seq_idx" ON "Delivery"("taskKey", "event", "seq");
