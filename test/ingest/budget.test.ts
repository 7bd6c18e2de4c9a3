/** The unverified-bytes budget and the header-only admission decision. */
import type { IncomingMessage } from "node:http";
import { budgetLimits, SMALL_BODY, UnverifiedBudget, type BudgetLimits } from "../../src/ingest/budget.js";
import { admit } from "../../src/ingest/body.js";

const req = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;
const MB = 1024 * 1024;

test("the limits that follow from a budget: an eighth reserved for small bodies, one whole payload per address", () => {
  expect(budgetLimits(64 * MB)).toEqual({
    totalBytes: 64 * MB,
    reserveBytes: 8 * MB,
    perAddressBytes: 28 * MB,
    perAddressBodies: 64,
  });
  expect(budgetLimits(29 * MB).perAddressBytes).toBeGreaterThanOrEqual(25 * MB);
  expect(() => budgetLimits(0)).toThrow(RangeError);
});

const limits: BudgetLimits = {
  totalBytes: 10 * MB,
  reserveBytes: 2 * MB,
  perAddressBytes: 5 * MB,
  perAddressBodies: 3,
};

test.each<[string, (b: UnverifiedBudget) => unknown, unknown]>([
  [
    "a small body's bytes are taken as they arrive, and stay small up to a megabyte",
    (b) => {
      const x = b.open("a") as any;
      return [b.held, x.take(100), x.take(SMALL_BODY - 100), b.heldLarge, x.take(10), b.heldLarge, b.held];
    },
    [0, null, null, 0, null, 10, SMALL_BODY + 10],
  ],
  [
    "large promises stop at the budget less the reserve",
    (b) => {
      const [x, y] = [b.open("a"), b.open("b")] as [any, any];
      return [x.promise(5 * MB), y.promise(4 * MB), b.heldLarge];
    },
    [null, "budget", 5 * MB],
  ],
  [
    "the reserve still takes the first megabyte of a body",
    (b) => {
      const [x, y, z] = [b.open("a"), b.open("b"), b.open("c")] as [any, any, any];
      return [x.promise(5 * MB), y.promise(3 * MB), z.take(MB), z.take(1), b.held];
    },
    [null, null, null, "budget", 9 * MB],
  ],
  [
    "one address holds at most its share of large bytes",
    (b) => {
      const [x, y] = [b.open("a"), b.open("a")] as [any, any];
      return [x.promise(4 * MB), y.promise(2 * MB), (b.open("b") as any).promise(2 * MB)];
    },
    [null, "address-bytes", null],
  ],
  [
    "one address sends at most so many bodies at once",
    (b) => [b.open("a"), b.open("a"), b.open("a"), b.open("a"), typeof b.open("b")],
    [expect.any(Object), expect.any(Object), expect.any(Object), "address-bodies", "object"],
  ],
  [
    "release gives everything back, once",
    (b) => {
      const x = b.open("a") as any;
      x.take(SMALL_BODY + 100);
      const before = [b.held, b.heldLarge];
      x.release();
      x.release();
      return [before, b.held, b.heldLarge, (b.open("a") as any).promise(5 * MB)];
    },
    [[SMALL_BODY + 100, 100], 0, 0, null],
  ],
])("%s", (_name, act, expected) => {
  expect(act(new UnverifiedBudget(limits))).toEqual(expected);
});

test("admission decides from the headers alone and takes nothing", () => {
  expect(admit(req({ "content-length": "101" }), 100)).toMatchObject({ ok: false, status: 413 });
  expect(admit(req({ "content-length": "abc" }), 100)).toMatchObject({ ok: false, status: 400 });
  expect(admit(req({ "content-length": "40" }), 100)).toEqual({ ok: true, declared: 40 });
  expect(admit(req({}), 100)).toEqual({ ok: true, declared: null });
});
