/**
 * A cap on GitHub writes within one sweep. The cap follows the sweep's async
 * context (AsyncLocalStorage), so webhook handlers and worker calls running
 * beside it are never refused for the sweep's sake.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { GitHub } from "./port.js";

const WRITES = new Set<keyof GitHub>([
  "addLabels",
  "removeLabel",
  "createComment",
  "addReaction",
  "createPull",
  "updatePullBranch",
  "deleteBranch",
  "createCheckRun",
  "rerequestCheckSuite",
  "rerunFailedJobs",
  "dispatchWorkflow",
]);

export class WriteBudgetExhausted extends Error {
  override readonly name = "WriteBudgetExhausted";
  constructor() {
    super("this sweep's GitHub write budget is spent; the rest waits for the next sweep");
  }
}

interface Budget {
  left: number;
  used: number;
}

const current = new AsyncLocalStorage<Budget>();

/** Runs `fn` with at most `writes` GitHub writes through budgeted clients. */
export async function withWriteBudget<T>(writes: number, fn: () => Promise<T>): Promise<{ result: T; used: number }> {
  const budget: Budget = { left: writes, used: 0 };
  const result = await current.run(budget, fn);
  return { result, used: budget.used };
}

export function budgetExhausted(): boolean {
  const b = current.getStore();
  return b !== undefined && b.left <= 0;
}

/** Wraps a client: each write spends one unit of the surrounding budget, if any. */
export function budgeted(github: GitHub): GitHub {
  return new Proxy(github, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function" || !WRITES.has(prop as keyof GitHub)) return value;
      return (...args: unknown[]) => {
        const b = current.getStore();
        if (b) {
          if (b.left <= 0) return Promise.reject(new WriteBudgetExhausted());
          b.left--;
          b.used++;
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
