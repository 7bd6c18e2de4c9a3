/**
 * Admission of an expensive route: so many run at once, so many wait in
 * arrival order, and the next is refused at once with 503 and Retry-After.
 */
import { Admission, Overloaded } from "../../src/http/admission.js";

/** A call that runs until released, recording when it started. */
function gated(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    release,
    fn: async () => {
      started.push(name);
      await done;
      return name;
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

test("two run, two wait in order, the fifth is refused at once; each finished call hands its slot to the longest waiting", async () => {
  let shed = 0;
  const a = new Admission({ concurrency: 2, queue: 2, retryAfterSeconds: 3, what: "claims", onShed: () => shed++ });
  const started: string[] = [];
  const calls = ["a", "b", "c", "d"].map((n) => gated(started, n));
  const answers = calls.map((c) => a.run(c.fn));
  await settle();
  expect(started).toEqual(["a", "b"]);
  expect(a.stats()).toEqual({ running: 2, waiting: 2, shed: 0 });

  const refused = await a.run(async () => "e").catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(Overloaded);
  expect(refused).toMatchObject({ status: 503, extra: { reason: "busy", retryable: true, retryAfterSeconds: 3 } });
  expect((refused as Error).message).toMatch(/at its limit for claims \(2 running, 2 waiting\); try again in 3 s/);
  expect(shed).toBe(1);

  calls[1]!.release();
  await answers[1];
  await settle();
  expect(started).toEqual(["a", "b", "c"]);
  calls[0]!.release();
  await settle();
  expect(started).toEqual(["a", "b", "c", "d"]);
  expect(a.stats()).toEqual({ running: 2, waiting: 0, shed: 1 });
  calls[2]!.release();
  calls[3]!.release();
  expect(await Promise.all(answers)).toEqual(["a", "b", "c", "d"]);
  expect(a.stats()).toEqual({ running: 0, waiting: 0, shed: 1 });
});

test("a call that throws frees its slot, and its error reaches its caller unchanged", async () => {
  const a = new Admission({ concurrency: 1, queue: 0, retryAfterSeconds: 1, what: "claims" });
  await expect(a.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  expect(a.stats()).toEqual({ running: 0, waiting: 0, shed: 0 });
  expect(await a.run(async () => 7)).toBe(7);
});

test("with no queue, a second call while one runs is refused", async () => {
  const a = new Admission({ concurrency: 1, queue: 0, retryAfterSeconds: 1, what: "claims" });
  const started: string[] = [];
  const one = gated(started, "one");
  const running = a.run(one.fn);
  await expect(a.run(async () => "two")).rejects.toBeInstanceOf(Overloaded);
  one.release();
  expect(await running).toBe("one");
  expect(a.stats().shed).toBe(1);
});

test.each([[{ concurrency: 0, queue: 1 }], [{ concurrency: 1, queue: -1 }]])(
  "an impossible setting %j is refused when built",
  (o) => {
    expect(() => new Admission({ ...o, retryAfterSeconds: 1, what: "claims" })).toThrow(
      /concurrency ≥ 1 and queue ≥ 0/,
    );
  },
);
