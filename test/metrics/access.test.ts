/** Who may scrape /metrics without ORCHESTRA_METRICS_TOKEN: only this machine. */
import { isLoopback } from "../../src/metrics/routes.js";

test.each<[string | undefined, boolean]>([
  ["127.0.0.1", true],
  ["127.8.9.10", true],
  ["::1", true],
  ["::ffff:127.0.0.1", true],
  ["10.0.0.7", false],
  ["::ffff:10.0.0.7", false],
  ["2001:db8::1", false],
  ["1127.0.0.1", false],
  [undefined, false],
])("%s → %s", (address, local) => {
  expect(isLoopback(address)).toBe(local);
});
