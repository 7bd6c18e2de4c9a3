/**
 * Untrusted label changes, as a table: every agent:* label, added or removed,
 * in every state. Nothing changes the task; a change that makes the labels
 * disagree with the task is undone (the label put back or taken off), with a
 * reply whose key allows one per person, issue and UTC day.
 */
import type { Context, Decision } from "../../src/machine/decision.js";
import type { TaskEvent } from "../../src/machine/events.js";
import { contextIn, NOW } from "../../src/machine/examples.js";
import { STATES, type State } from "../../src/machine/model.js";
import { decide } from "../../src/machine/table.js";
import { untrustedReplyKey, utcDay } from "../../src/machine/rows/labels.js";

const ctx = (state: State, now = NOW): Context => contextIn(state, { now });

const untrusted = (label: string, change: "added" | "removed", deliveryId = "d1"): TaskEvent => ({
  kind: "label-untrusted",
  actor: "renovate[bot]",
  why: "renovate[bot] is a bot and not in trust.bots",
  label,
  change,
  deliveryId,
});

/** `+` put back, `-` taken off, `·` nothing to do. */
function token(d: Decision, label: string): string {
  if (d.outcome !== "unchanged") return `✗${d.outcome}`;
  const fix = d.effects.find((e) => e.kind === "label");
  if (!fix) return d.effects.length === 0 ? "·" : "?";
  const p = fix.payload;
  if (p.label === label && p.others.length === 0) return "+";
  if (p.others.includes(label) && p.label !== label) return "-";
  return "?";
}

/** Columns: none queued claimed review done blocked failed cancelled. */
const EXPECTED: Record<string, string> = {
  "agent:queued removed": "· + · · · · · ·",
  "agent:in-progress removed": "· · + · · · · ·",
  "agent:review removed": "· · · + · · · ·",
  "agent:blocked removed": "· · · · · + · ·",
  "agent:failed removed": "· · · · · · + ·",
  "agent:queued added": "- · - - - - - -",
  "agent:in-progress added": "- - · - - - - -",
  "agent:review added": "- - - · - - - -",
  "agent:blocked added": "- - - - - · - -",
  "agent:failed added": "- - - - - - · -",
};

describe.each(Object.entries(EXPECTED))("%s by someone untrusted", (what, row) => {
  const [label, change] = what.split(" ") as [string, "added" | "removed"];
  test.each(STATES.map((s, i) => [s, i]))("in %s", (state, i) => {
    const d = decide(ctx(state), untrusted(label, change));
    const want = row.split(" ")[i]!;
    expect(token(d, label)).toBe(want);
    // The task itself never changes.
    expect(d.outcome).toBe("unchanged");
    const replies = d.effects.filter((e) => e.kind === "comment");
    if (want === "·") expect(replies).toHaveLength(0);
    else {
      expect(replies).toHaveLength(1);
      expect(replies[0]!.key).toBe(untrustedReplyKey({ repo: "acme/app", issue: 12 }, "renovate[bot]", NOW));
      expect((replies[0]!.payload as { body: string }).body).toContain(`@renovate[bot] the \`${label}\` label`);
    }
  });
});

test("a label that is not Orchestra's is none of its business", () => {
  expect(decide(ctx("queued"), untrusted("bug", "removed")).effects).toEqual([]);
  expect(decide(ctx("none"), untrusted("bug", "added")).effects).toEqual([]);
});

test("every repeat is undone on its own, the reply is one key for the day", () => {
  const a = decide(ctx("queued"), untrusted("agent:queued", "removed", "d1"));
  const b = decide(ctx("queued"), untrusted("agent:queued", "removed", "d2"));
  const fixA = a.effects.find((e) => e.kind === "label")!;
  const fixB = b.effects.find((e) => e.kind === "label")!;
  expect(fixA.key).not.toBe(fixB.key);
  expect(a.effects.find((e) => e.kind === "comment")!.key).toBe(b.effects.find((e) => e.kind === "comment")!.key);
});

describe("the reply key: one per person, issue and calendar day in UTC", () => {
  const subject = { repo: "acme/app", issue: 12 };
  const at = (iso: string) => new Date(iso);

  test.each([
    ["the same day, morning and night", "2026-06-01T00:00:00.000Z", "2026-06-01T23:59:59.999Z", true],
    ["one millisecond apart across midnight UTC", "2026-06-01T23:59:59.999Z", "2026-06-02T00:00:00.000Z", false],
    ["a day apart", "2026-06-01T12:00:00.000Z", "2026-06-02T12:00:00.000Z", false],
  ])("%s", (_name, first, second, same) => {
    expect(untrustedReplyKey(subject, "eve", at(first)) === untrustedReplyKey(subject, "eve", at(second))).toBe(same);
  });

  test("the day is UTC's, whatever the offset the time was written with", () => {
    expect(utcDay(at("2026-06-01T23:30:00-02:00"))).toBe("2026-06-02");
    expect(utcDay(at("2026-06-02T00:30:00+02:00"))).toBe("2026-06-01");
  });

  test("logins are case-insensitive; other people, issues and repositories get their own", () => {
    const k = untrustedReplyKey(subject, "Eve", NOW);
    expect(untrustedReplyKey(subject, "eve", NOW)).toBe(k);
    expect(untrustedReplyKey(subject, "mallory", NOW)).not.toBe(k);
    expect(untrustedReplyKey({ ...subject, issue: 13 }, "eve", NOW)).not.toBe(k);
    expect(untrustedReplyKey({ ...subject, repo: "acme/other" }, "eve", NOW)).not.toBe(k);
  });

  test("an untrusted queue label shares the budget: removed each time, one reply a day", () => {
    const q = (deliveryId: string, now: Date) =>
      decide(ctx("none", now), { kind: "queue-label-untrusted", actor: "renovate[bot]", why: "a bot", deliveryId });
    const [a, b, c] = [
      q("d1", NOW),
      q("d2", new Date(NOW.getTime() + 3_600_000)),
      q("d3", new Date(NOW.getTime() + 86_400_000)),
    ];
    const keys = (d: Decision, kind: string) => d.effects.filter((e) => e.kind === kind).map((e) => e.key);
    expect(new Set([...keys(a, "remove-label"), ...keys(b, "remove-label"), ...keys(c, "remove-label")]).size).toBe(3);
    expect(keys(a, "comment")).toEqual(keys(b, "comment"));
    expect(keys(c, "comment")).not.toEqual(keys(a, "comment"));
    expect(keys(a, "comment")).toEqual([untrustedReplyKey(subject, "renovate[bot]", NOW)]);
  });
});
