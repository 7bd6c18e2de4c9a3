-- The executor's lanes gained a first one, a claim's interlock label (rank 0): the effects still to be
-- performed keep their order, each one rank down (ownership 1, what people wait for 2, housekeeping 3).
UPDATE "Effect" SET "lane" = "lane" + 1 WHERE "state" IN ('pending', 'running', 'parked');
