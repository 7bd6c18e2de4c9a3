import { parseEnv } from "../../src/config/env.js";
import { errorsOf } from "../support/env-errors.js";

describe("ORCHESTRA_RETRY_WINDOW_HOURS", () => {
  test("defaults to 6 hours", () => {
    expect(parseEnv({}).retryWindowHours).toBe(6);
  });

  test.each([
    ["1", 1],
    ["24", 24],
    ["168", 168],
  ])("%s is accepted", (value, hours) => {
    expect(parseEnv({ ORCHESTRA_RETRY_WINDOW_HOURS: value }).retryWindowHours).toBe(hours);
  });

  test.each([
    [
      "0",
      /^ORCHESTRA_RETRY_WINDOW_HOURS must be at least 1 hour: a shorter window parks deliveries and GitHub writes during an ordinary GitHub outage \(got "0"\)$/,
    ],
    ["1.5", /^ORCHESTRA_RETRY_WINDOW_HOURS must be a whole number of hours, e.g. 6 \(got "1.5"\)$/],
    ["6h", /^ORCHESTRA_RETRY_WINDOW_HOURS must be a whole number of hours, e.g. 6 \(got "6h"\)$/],
    ["169", /^ORCHESTRA_RETRY_WINDOW_HOURS must be at most 168 hours \(got "169"\)$/],
  ])("%s is refused with one line saying what is valid", (value, pattern) => {
    const lines = errorsOf({ ORCHESTRA_RETRY_WINDOW_HOURS: value });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  });
});
