/**
 * The transition table, exhaustively: every event in every state has a row,
 * and each row does what this matrix (written by hand, as the spec) says.
 * Adding a state or an event without its row — here and in the machine —
 * fails this test. docs/design.md shows the same table, generated from the
 * machine; a stale page fails too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EVENT_KINDS, type EventKind } from "../../src/machine/events.js";
import { STATES } from "../../src/machine/model.js";
import { TABLE } from "../../src/machine/table.js";
import { exampleDecision } from "../../src/machine/examples.js";
import { renderTransitionTable, START, END } from "../../src/machine/doc.js";
import type { Decision } from "../../src/machine/decision.js";

/**
 * Columns: none queued claimed review done blocked failed cancelled.
 * A state name: the task moves (or stays, changed) there. `·`: nothing
 * changes. `·+`: nothing changes but effects or decisions are recorded (a
 * reply, a label taken off). `✗reason`: refused.
 */
const EXPECTED: { readonly [K in EventKind]: string } = {
  "queue-label": "queued ·  ·+ ·+ queued queued queued queued",
  "queue-label-untrusted": "·+ · ·+ ·+ ·+ ·+ ·+ ·+",
  "queue-label-removed": "· cancelled · · · · · ·",
  "label-untrusted": "· ·+ · · · · · ·",
  "issue-closed": "· cancelled cancelled done · cancelled cancelled ·",
  "config-invalid": "·+ ·+ ·+ ·+ ·+ ·+ ·+ ·+",
  claim: "✗not-queued claimed ✗not-queued ✗not-queued ✗not-queued ✗not-queued ✗not-queued ✗not-queued",
  dispatched: "· · claimed · · · · ·",
  "dispatch-refused": "· · queued · · · · ·",
  heartbeat: "✗superseded ✗superseded claimed ✗superseded ✗superseded ✗superseded ✗superseded ✗superseded",
  "lease-expired": "· · claimed · · · · ·",
  "lease-stalled": "· · claimed · · · · ·",
  "worker-revoked": "· · claimed · · · · ·",
  "run-released": "✗superseded ✗superseded queued ✗superseded ✗superseded ✗superseded ✗superseded ✗superseded",
  "run-exited": "✗superseded ✗superseded claimed ✗superseded ✗superseded ✗superseded ✗superseded ✗superseded",
  "run-classified": "· · queued · · · · ·",
  "pr-published": "· · review · · · · ·",
  "publish-refused": "· · queued · · · · ·",
  "branch-kept": "· queued · · · · · ·",
  "sweep-failed": "· queued · · · · · ·",
  "recovery-stuck": "· · blocked · · · · ·",
  "blockers-read": "· queued claimed review · blocked failed ·",
  "breaker-opened": "· ·+ ·+ ·+ ·+ ·+ ·+ ·+",
  "pr-opened": "· review review · done blocked failed cancelled",
  "pr-merged": "· done done done done done done done",
  "pr-closed": "· · · blocked · · · ·",
  "pr-synchronized": "· · · review · · · ·",
  "branch-pushed": "· queued claimed review · blocked failed ·",
  "branch-rewritten": "· blocked ·+ blocked · · · ·",
  "check-failed": "· · · queued · · · ·",
  "base-moved": "· · · queued · · · ·",
  "review-submitted": "· · · queued · · · ·",
  command: "✗illegal ✗illegal ✗illegal ✗illegal ✗illegal queued queued ✗illegal",
  correction: "· ·+ ·+ queued · ·+ ·+ ·",
  "decision-receipted": "· ·+ ·+ ·+ ·+ ·+ ·+ ·+",
  "decision-requested": "✗superseded ✗superseded blocked ✗superseded ✗superseded ✗superseded ✗superseded ✗superseded",
  "question-answered": "· · ·+ · · queued · ·",
  "condition-met": "· · ·+ · · queued · ·",
  "question-expired": "· · ·+ · · ·+ · ·",
  drift: "·+ ·+ ·+ ·+ ·+ ·+ ·+ ·+",
  "sub-issues-closed": "· · · · · · done ·",
  "installation-removed": "· cancelled cancelled cancelled · cancelled cancelled ·",
  "access-lost": "· queued queued review · blocked failed ·",
  "access-restored": "· · · · · · · ·",
  "fleet-refresh": "·+ ·+ ·+ ·+ ·+ ·+ ·+ ·+",
};

function token(d: Decision): string {
  switch (d.outcome) {
    case "applied":
      return d.to;
    case "unchanged":
      return d.effects.length > 0 || (d.decisions?.length ?? 0) > 0 ? "·+" : "·";
    case "refused":
      return `✗${d.reason}`;
  }
}

test("every event has a row for every state, in the machine and in the spec", () => {
  expect(Object.keys(TABLE).sort()).toEqual([...EVENT_KINDS].sort());
  expect(Object.keys(EXPECTED).sort()).toEqual([...EVENT_KINDS].sort());
  for (const kind of EVENT_KINDS) {
    expect(Object.keys(TABLE[kind]).sort()).toEqual([...STATES].sort());
    expect(EXPECTED[kind].split(/\s+/)).toHaveLength(STATES.length);
  }
});

describe.each(EVENT_KINDS.map((k) => [k]))("%s", (kind) => {
  test.each(STATES.map((s, i) => [s, i]))("in %s", (state, i) => {
    const want = EXPECTED[kind].split(/\s+/)[i];
    expect(token(exampleDecision(state, kind))).toBe(want);
  });
});

test("every applied transition carries the label its state shows, and a label effect when the state changes", () => {
  for (const kind of EVENT_KINDS) {
    for (const state of STATES) {
      const d = exampleDecision(state, kind);
      if (d.outcome !== "applied" || d.to === state) continue;
      const label = d.effects.find((e) => e.kind === "label");
      expect({ kind, state, label: label?.payload }).toMatchObject({ kind, state, label: { label: d.label } });
    }
  }
});

test("effect keys are unique within a decision", () => {
  for (const kind of EVENT_KINDS) {
    for (const state of STATES) {
      const keys = exampleDecision(state, kind).effects.map((e) => e.key);
      expect(new Set(keys).size).toBe(keys.length);
    }
  }
});

test("docs/design.md shows the table the machine has (npm run docs:machine)", () => {
  const page = readFileSync(join(import.meta.dirname, "..", "..", "docs", "design.md"), "utf8");
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  expect(start).toBeGreaterThan(-1);
  expect(page.slice(start, end + END.length)).toBe(renderTransitionTable());
});
