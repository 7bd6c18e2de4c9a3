/**
 * When one replica counts another as stopped: its beat stood still for the
 * silent time of the observer's own, unbroken watching. Clocks that differ
 * between machines, and an observer that itself missed its turns, never make
 * a live replica look dead.
 */
import { Silence } from "../../src/replicas/silence.js";

const T0 = Date.parse("2026-01-05T12:00:00Z");
const at = (s: number) => new Date(T0 + s * 1_000);

/** A step: the observer looks at second `look`, seeing each replica's beat (seconds), or misses a turn. */
type Step = { look: number; beats: Record<string, number> } | "missed";

const cases: Array<{ name: string; steps: Step[]; silent: string[][] }> = [
  {
    name: "a beat that stands still for 6 s of watching",
    steps: [0, 2, 4, 6].map((look) => ({ look, beats: { a: -1 } })),
    silent: [[], [], [], ["a"]],
  },
  {
    name: "a replica that keeps beating, however far behind the observer's clock its own runs",
    steps: [0, 2, 4, 6, 8, 10].map((look) => ({ look, beats: { a: look - 3_600 } })),
    silent: [[], [], [], [], [], []],
  },
  {
    name: "a beat that moves resets the watch; it is silent 6 s after its last move",
    steps: [
      { look: 0, beats: { a: 0 } },
      { look: 4, beats: { a: 4 } },
      { look: 8, beats: { a: 4 } },
      { look: 10, beats: { a: 4 } },
    ],
    silent: [[], [], [], ["a"]],
  },
  {
    name: "a gap in the observer's own looks (over 4 s) starts a new watch",
    steps: [
      { look: 0, beats: { a: 0 } },
      { look: 30, beats: { a: 0 } },
      { look: 32, beats: { a: 0 } },
      { look: 34, beats: { a: 0 } },
      { look: 36, beats: { a: 0 } },
    ],
    silent: [[], [], [], [], ["a"]],
  },
  {
    name: "a missed turn (its own beat not written) starts a new watch",
    steps: [
      { look: 0, beats: { a: 0 } },
      { look: 2, beats: { a: 0 } },
      "missed",
      { look: 6, beats: { a: 0 } },
      { look: 8, beats: { a: 0 } },
      { look: 12, beats: { a: 0 } },
    ],
    silent: [[], [], [], [], ["a"]],
  },
  {
    name: "each replica is judged on its own beat",
    steps: [
      { look: 0, beats: { a: 0, b: 0 } },
      { look: 2, beats: { a: 0, b: 2 } },
      { look: 4, beats: { a: 0, b: 4 } },
      { look: 6, beats: { a: 0, b: 6 } },
    ],
    silent: [[], [], [], ["a"]],
  },
  {
    name: "a replica whose row went (stopped in order, or forgotten) is no longer watched",
    steps: [
      { look: 0, beats: { a: 0 } },
      { look: 2, beats: {} },
      { look: 4, beats: { a: 0 } },
      { look: 6, beats: { a: 0 } },
      { look: 10, beats: { a: 0 } },
    ],
    silent: [[], [], [], [], ["a"]],
  },
];

test.each(cases)("$name", ({ steps, silent }) => {
  const s = new Silence({ silentMs: 6_000, gapMs: 4_000 });
  const seen: string[][] = [];
  for (const step of steps) {
    if (step === "missed") {
      s.missed();
      continue;
    }
    const beats = Object.entries(step.beats).map(([id, b]) => ({ id, beatAt: at(b) }));
    seen.push(s.observe(beats, at(step.look)));
  }
  expect(seen).toEqual(silent);
});
