/** The unverified-bytes budget and the header-only admission decision. */
import type { IncomingMessage } from "node:http";
import { ByteBudget } from "../../src/ingest/budget.js";
import { admit } from "../../src/ingest/body.js";

const req = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;

test("the budget hands out bytes until they run out and takes them back", () => {
  const b = new ByteBudget(100);
  expect(b.take(60)).toBe(true);
  expect(b.take(41)).toBe(false);
  expect(b.held).toBe(60);
  expect(b.take(40)).toBe(true);
  b.give(60);
  expect(b.held).toBe(40);
  expect(b.take(60)).toBe(true);
  expect(() => new ByteBudget(0)).toThrow(RangeError);
});

test("admission: over the cap is 413, over the budget 503, a bad length 400, and only admitted bodies take bytes", () => {
  const b = new ByteBudget(50);
  expect(admit(req({ "content-length": "101" }), b, 100)).toMatchObject({ ok: false, status: 413 });
  expect(admit(req({ "content-length": "abc" }), b, 100)).toMatchObject({ ok: false, status: 400 });
  expect(b.held).toBe(0);
  expect(admit(req({ "content-length": "40" }), b, 100)).toEqual({ ok: true, declared: 40 });
  expect(b.held).toBe(40);
  expect(admit(req({ "content-length": "11" }), b, 100)).toMatchObject({ ok: false, status: 503 });
  expect(b.held).toBe(40);
  // No declared length (chunked): admitted, its bytes are taken as they arrive.
  expect(admit(req({}), b, 100)).toEqual({ ok: true, declared: null });
  expect(b.held).toBe(40);
});
