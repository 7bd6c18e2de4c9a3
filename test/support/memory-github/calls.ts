/** The test's controls of the memory port's calls: those recorded, and the failures injected into the next ones. */
import type { PortMethod } from "./failures.js";
import type { FailOptions } from "./records.js";
import type { Memory } from "./writes.js";

export function callControls(m: Memory) {
  const { calls, failures, fail } = m;
  return {
    /** Every port call, in order. */
    calls,
    /** The calls of one method. */
    callsTo: (method: PortMethod) => calls.filter((c) => c.method === method),

    fail,
    /** The next call of `method` throws `error`. */
    failNext: (method: PortMethod, error: Error | (() => Error), opts: Omit<FailOptions, "times"> = {}): void =>
      fail(method, error, { ...opts, times: 1 }),
    /** How many more calls of `method` will throw an injected error. */
    failuresLeft: (method: PortMethod) => (failures.get(method) ?? []).reduce((n, f) => n + f.left, 0),
    clearFailures(): void {
      failures.clear();
    },
  };
}
