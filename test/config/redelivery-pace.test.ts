import { parseEnv } from "../../src/config/env.js";
import { errorsOf } from "../support/env-errors.js";

test("the delivery log is swept every 60 s, asking for at most 50 redeliveries, unless the operator says otherwise", () => {
  expect(parseEnv({})).toMatchObject({ deliveriesSweepSeconds: 60, redeliveriesPerSweep: 50 });
  expect(
    parseEnv({ ORCHESTRA_DELIVERIES_SWEEP_SECONDS: "10", ORCHESTRA_REDELIVERIES_PER_SWEEP: "1000" }),
  ).toMatchObject({ deliveriesSweepSeconds: 10, redeliveriesPerSweep: 1000 });
});

test.each([
  [
    "ORCHESTRA_DELIVERIES_SWEEP_SECONDS",
    "5",
    /^ORCHESTRA_DELIVERIES_SWEEP_SECONDS must be at least 10 seconds: each sweep reads GitHub's delivery log as the App \(got "5"\)$/,
  ],
  ["ORCHESTRA_DELIVERIES_SWEEP_SECONDS", "3601", /^ORCHESTRA_DELIVERIES_SWEEP_SECONDS must be at most 3600 seconds/],
  [
    "ORCHESTRA_REDELIVERIES_PER_SWEEP",
    "0",
    /^ORCHESTRA_REDELIVERIES_PER_SWEEP must be at least 1 redelivery \(got "0"\)$/,
  ],
  ["ORCHESTRA_REDELIVERIES_PER_SWEEP", "1001", /^ORCHESTRA_REDELIVERIES_PER_SWEEP must be at most 1000 redeliveries/],
  [
    "ORCHESTRA_REDELIVERIES_PER_SWEEP",
    "ten",
    /^ORCHESTRA_REDELIVERIES_PER_SWEEP must be a whole number of redeliveries, e.g. 50 \(got "ten"\)$/,
  ],
])("%s=%s is refused with one line saying what is valid", (name, value, pattern) => {
  const lines = errorsOf({ [name]: value });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
});
