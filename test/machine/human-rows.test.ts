/**
 * Comment commands in every state, as a table: accepted ones move the task
 * (or answer) with 👀 and 🚀; every illegal one is refused with 😕 and a reply
 * that says why and what would work.
 */
import type { Context, Decision } from "../../src/machine/decision.js";
import type { CommandName, TaskEvent } from "../../src/machine/events.js";
import { contextIn } from "../../src/machine/examples.js";
import { STATES, type State } from "../../src/machine/model.js";
import { decide } from "../../src/machine/table.js";

const ctx = (state: State): Context => contextIn(state);

const cmd = (command: CommandName, extra: Partial<Extract<TaskEvent, { kind: "command" }>> = {}): TaskEvent => ({
  kind: "command",
  command,
  author: "alice",
  commentId: 42,
  ...extra,
});
const outcome = (d: Decision) => (d.outcome === "applied" ? d.to : d.outcome === "refused" ? "✗" : "·");
const reactions = (d: Decision) =>
  d.effects.filter((e) => e.kind === "reaction").map((e) => (e.payload as { content: string }).content);

/** Columns: none queued claimed review done blocked failed cancelled. */
const EXPECTED: Record<Exclude<CommandName, "verify">, string> = {
  retry: "✗ ✗ ✗ ✗ ✗ queued queued ✗",
  resume: "✗ ✗ ✗ ✗ ✗ queued queued ✗",
  hold: "✗ blocked blocked blocked ✗ ✗ ✗ ✗",
  cancel: "✗ cancelled cancelled cancelled ✗ cancelled cancelled ✗",
  status: "· · · · · · · ·",
  help: "· · · · · · · ·",
};

describe.each(Object.entries(EXPECTED))("orchestra %s", (command, row) => {
  test.each(STATES.map((s, i) => [s, i]))("in %s", (state, i) => {
    const d = decide(ctx(state), cmd(command as CommandName, command === "help" ? { help: "the commands" } : {}));
    const want = row.split(" ")[i];
    expect(outcome(d)).toBe(want);
    if (want === "✗") {
      expect(reactions(d)).toEqual(["confused"]);
      const reply = d.effects.find((e) => e.kind === "comment");
      expect((reply?.payload as { body: string }).body).toMatch(/orchestra/);
    } else {
      expect(reactions(d)).toEqual(["eyes", "rocket"]);
    }
  });
});

describe("orchestra verify", () => {
  test("records a sign-off bound to the head, superseding earlier ones of the same phase", () => {
    const d = decide(ctx("review"), cmd("verify", { phase: "phase-2", headSha: "h".repeat(40) }));
    expect(d.outcome).toBe("unchanged");
    const signOff = d.outcome === "unchanged" ? d.decisions?.[0] : undefined;
    expect(signOff).toMatchObject({
      kind: "verify",
      subject: "verify:phase-2",
      headSha: "h".repeat(40),
      source: "comment:42",
      supersedes: { subject: "verify:phase-2" },
    });
  });
  test("a parse problem is refused with the problem in the reply", () => {
    const d = decide(ctx("review"), cmd("verify", { problem: "write `orchestra verify <phase-id>`" }));
    expect(outcome(d)).toBe("✗");
    expect((d.effects.find((e) => e.kind === "comment")?.payload as { body: string }).body).toContain(
      "orchestra verify <phase-id>",
    );
  });
  test("on an issue that is not a task it is refused", () => {
    expect(outcome(decide(ctx("none"), cmd("verify", { phase: "p1" })))).toBe("✗");
  });
});
