/**
 * The fleet issue in the machine, as tables: the debounce key decision (one
 * effect per repository and window, due after the window), which
 * transitions the issue shows, and the fleet-refresh rows. Plain contexts,
 * no database, no GitHub.
 */
import { DEFAULT_CONFIG, parseRepoConfig, type RepoConfig } from "../../src/config/repo.js";
import type { Context, TaskPatch, TaskView } from "../../src/machine/decision.js";
import type { EffectSpec } from "../../src/machine/effects.js";
import type { TaskEvent } from "../../src/machine/events.js";
import { EXAMPLE_EVENTS, contextIn, exampleTask, NOW } from "../../src/machine/examples.js";
import { DEFAULT_FLEET_DEBOUNCE_MS } from "../../src/config/defaults.js";
import { FLEET_SETTLE_MS, fleetEffect, fleetShows, fleetWindow } from "../../src/machine/fleet.js";
import type { State, TaskState } from "../../src/machine/model.js";
import { decide } from "../../src/machine/table.js";

const at = (iso: string) => new Date(iso);
const S = 1000;

function config(doc: unknown): RepoConfig {
  const r = parseRepoConfig(doc);
  if (!r.ok) throw new Error(r.problems.join("; "));
  return r.config;
}

const FLEET = config({ fleetIssue: true });

const ctx = (state: State, over: { config?: RepoConfig; now?: Date; fleetDebounceMs?: number } = {}): Context =>
  contextIn(state, { config: FLEET, ...over });

const fleetOf = (effects: EffectSpec[]) => effects.filter((e) => e.kind === "fleet-issue");

describe("the debounce key: one effect per repository and window, due after the window", () => {
  test.each([
    // now, window, key's window start, due at
    [
      "the first moment of a window",
      "2026-06-01T12:00:00.000Z",
      30 * S,
      "2026-06-01T12:00:00.000Z",
      "2026-06-01T12:00:32.000Z",
    ],
    ["mid-window", "2026-06-01T12:00:17.250Z", 30 * S, "2026-06-01T12:00:00.000Z", "2026-06-01T12:00:32.000Z"],
    [
      "the last moment of a window",
      "2026-06-01T12:00:29.999Z",
      30 * S,
      "2026-06-01T12:00:00.000Z",
      "2026-06-01T12:00:32.000Z",
    ],
    ["the next window", "2026-06-01T12:00:30.000Z", 30 * S, "2026-06-01T12:00:30.000Z", "2026-06-01T12:01:02.000Z"],
    ["a minute's window", "2026-06-01T12:00:45.000Z", 60 * S, "2026-06-01T12:00:00.000Z", "2026-06-01T12:01:02.000Z"],
    [
      "windows under a second count as a second",
      "2026-06-01T12:00:00.400Z",
      10,
      "2026-06-01T12:00:00.000Z",
      "2026-06-01T12:00:03.000Z",
    ],
  ])("%s", (_what, now, windowMs, start, due) => {
    const e = fleetEffect("acme/app", at(now), windowMs);
    expect(e).toEqual({
      kind: "fleet-issue",
      key: `fleet-issue:acme/app:${start}`,
      payload: { repo: "acme/app" },
      at: at(due),
      repoWide: true,
      coalesce: "fleet-issue:acme/app",
    });
    expect(fleetWindow(at(now), windowMs).start).toEqual(at(start));
    expect(e.at!.getTime() - fleetWindow(at(now), windowMs).end.getTime()).toBe(FLEET_SETTLE_MS);
  });

  test("another repository in the same window is another effect", () => {
    expect(fleetEffect("acme/app", NOW).key).not.toBe(fleetEffect("acme/other", NOW).key);
  });

  test("the default window is 30 seconds", () => {
    expect(DEFAULT_FLEET_DEBOUNCE_MS).toBe(30_000);
    expect(fleetEffect("acme/app", at("2026-06-01T12:00:31.000Z")).key).toBe(
      "fleet-issue:acme/app:2026-06-01T12:00:30.000Z",
    );
  });

  test("a burst of ten changes in one window decides one key; the next change after it, another", () => {
    const burst = Array.from(
      { length: 10 },
      (_, i) => fleetEffect("acme/app", new Date(NOW.getTime() + i * 2_900), 30 * S).key,
    );
    expect(new Set(burst).size).toBe(1);
    expect(fleetEffect("acme/app", new Date(NOW.getTime() + 30 * S), 30 * S).key).not.toBe(burst[0]);
  });
});

describe("which transitions the fleet issue shows", () => {
  const task: TaskView = { ...exampleTask("queued"), blockedBy: ["acme/app#3"], blockersAt: NOW };
  test.each<[string, TaskView | null, TaskState, TaskPatch, { class?: string | null } | undefined, boolean]>([
    ["a new task", null, "queued", {}, undefined, true],
    ["another state", task, "claimed", {}, undefined, true],
    [
      "a renewed lease (heartbeat)",
      { ...task, state: "claimed" },
      "claimed",
      { leaseExpiresAt: NOW, usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.1 } },
      undefined,
      false,
    ],
    [
      "blockers read again, unchanged",
      task,
      "queued",
      { blockedBy: ["acme/app#3"], blockersAt: new Date(NOW.getTime() + 60_000) },
      undefined,
      false,
    ],
    ["blockers changed", task, "queued", { blockedBy: null, blockersAt: NOW }, undefined, true],
    [
      "blockers read for the first time",
      { ...task, blockersAt: null },
      "queued",
      { blockedBy: null, blockersAt: NOW },
      undefined,
      true,
    ],
    ["a backoff", task, "queued", { backoffUntil: NOW, diagnostic: "dispatch refused" }, undefined, true],
    ["the same diagnostic again", { ...task, diagnostic: "x" }, "queued", { diagnostic: "x" }, undefined, false],
    ["a run classified (state kept)", { ...task, state: "claimed" }, "claimed", {}, { class: "phantom" }, true],
  ])("%s", (_what, current, to, patch, run, shows) => {
    expect(fleetShows(current, to, patch, run)).toBe(shows);
  });
});

describe("transitions in a repository with fleetIssue: true", () => {
  const decideIn = (state: State, kind: keyof typeof EXAMPLE_EVENTS, over: Parameters<typeof ctx>[1] = {}) =>
    decide(ctx(state, over), EXAMPLE_EVENTS[kind]);

  test.each<[string, State, keyof typeof EXAMPLE_EVENTS, number]>([
    ["queueing", "none", "queue-label", 1],
    ["a claim", "queued", "claim", 1],
    ["an exit that blocks on a question", "claimed", "decision-requested", 1],
    ["a merge", "review", "pr-merged", 1],
    ["a heartbeat", "claimed", "heartbeat", 0],
    ["a correction (no transition)", "claimed", "correction", 0],
    ["a refused claim", "claimed", "claim", 0],
  ])("%s: %i fleet-issue effect(s)", (_what, state, kind, n) => {
    expect(fleetOf(decideIn(state, kind).effects)).toHaveLength(n);
  });

  test("the effect is keyed by the window of the decision's time, with the configured window", () => {
    const d = decideIn("queued", "claim", { now: at("2026-06-01T12:01:10.000Z"), fleetDebounceMs: 60 * S });
    expect(fleetOf(d.effects)).toEqual([fleetEffect("acme/app", at("2026-06-01T12:01:10.000Z"), 60 * S)]);
    expect(fleetOf(d.effects)[0]!.key).toBe("fleet-issue:acme/app:2026-06-01T12:01:00.000Z");
  });

  test("with fleetIssue off (the default), no transition records one", () => {
    for (const [state, kind] of [
      ["none", "queue-label"],
      ["queued", "claim"],
      ["review", "pr-merged"],
    ] as const) {
      expect(fleetOf(decideIn(state, kind, { config: DEFAULT_CONFIG }).effects)).toEqual([]);
    }
  });

  test("a paused repository still records it (the issue is a view)", () => {
    expect(
      fleetOf(
        decideIn("claimed", "decision-requested", { config: config({ fleetIssue: true, paused: true }) }).effects,
      ),
    ).toHaveLength(1);
  });
});

describe("fleet-refresh", () => {
  const refresh: TaskEvent = { kind: "fleet-refresh", why: "reconcile" };
  test("records the window's effect for the repository, changing nothing else", () => {
    const d = decide({ ...ctx("none"), subject: { installationId: 1, repo: "acme/app", issue: 0 } }, refresh);
    expect(d).toEqual({
      outcome: "unchanged",
      why: "fleet issue refreshed: reconcile",
      effects: [fleetEffect("acme/app", NOW)],
    });
  });

  test("records nothing where fleetIssue is off, or the configuration is invalid", () => {
    expect(decide(ctx("none", { config: DEFAULT_CONFIG }), refresh)).toEqual({
      outcome: "unchanged",
      why: "fleetIssue is off in this repository",
      effects: [],
    });
    expect(decide({ ...ctx("none"), config: null }, refresh).effects).toEqual([]);
  });
});
