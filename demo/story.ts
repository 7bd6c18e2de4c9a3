/**
 * The story as it unfolds: one line per step, said by whoever acted (the
 * maintainer, CI, the worker, Orchestra), timed from the demo's start. What
 * GitHub sees is said where the simulation sees it; what Orchestra decides is
 * read from its operator API, the way `orchestra tasks` and `orchestra runs`
 * read it. The story is told when every step has happened and nothing is
 * left to do: no task queued or claimed, no CI run going.
 */
import { performance } from "node:perf_hooks";

export const STEPS = [
  "claimed",
  "pr-opened",
  "ci-failed",
  "rerun",
  "rerun-passed",
  "phantom",
  "merged",
  "done",
] as const;
export type Step = (typeof STEPS)[number];
export type Say = (who: string, text: string, step?: Step) => void;

const POLL_MS = 250;

interface TaskRow {
  issue: number;
  state: string;
  prNumber: number | null;
  attempt: number;
  diagnostic: string | null;
}
interface RunRow {
  id: string;
  attempt: number;
  class: string | null;
  recovery: string | null;
  evidence: { why?: unknown } | null;
  workerName: string | null;
  task: { issue: number | null };
}

export class Story {
  readonly #seen = new Set<Step>();
  readonly #t0 = performance.now();

  constructor(readonly print: (line: string) => void) {}

  say: Say = (who, text, step) => {
    if (step) this.#seen.add(step);
    const at = `${((performance.now() - this.#t0) / 1000).toFixed(1)}s`;
    this.print(`${at.padStart(7)}  ${who.padEnd(9)}  ${text}`);
  };

  /** The steps that have not happened yet. */
  missing(): Step[] {
    return STEPS.filter((s) => !this.#seen.has(s));
  }
}

/**
 * Reads the service's tasks and runs until stopped, saying what changed; resolves `told` once every step has
 * happened and the fleet is at rest (`idle` says whether the simulation still has work going).
 */
export function watchService(
  service: { url: string; adminToken: string },
  story: Story,
  idle: () => boolean,
): { told: Promise<void>; stop(): Promise<void> } {
  const tasks = new Map<number, TaskRow>();
  const runs = new Map<string, RunRow>();
  let stopped = false;
  let resolveTold!: () => void;
  const told = new Promise<void>((resolve) => (resolveTold = resolve));
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(service.url + path, { headers: { authorization: `Bearer ${service.adminToken}` } });
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
    return (await res.json()) as T;
  };

  const look = async (): Promise<boolean> => {
    const [{ tasks: now }, { runs: latest }] = await Promise.all([
      get<{ tasks: TaskRow[] }>("/api/v1/tasks"),
      get<{ runs: RunRow[] }>("/api/v1/runs?limit=100"),
    ]);
    for (const r of [...latest].reverse()) {
      const before = runs.get(r.id);
      runs.set(r.id, r);
      const issue = `#${r.task.issue}`;
      if (!before)
        story.say(
          "orchestra",
          `${issue} claimed by worker ${r.workerName ?? "?"} (run ${r.id.slice(0, 8)}, attempt ${r.attempt})`,
          "claimed",
        );
      if (r.class && r.class !== before?.class) {
        const why = typeof r.evidence?.why === "string" ? `: ${r.evidence.why}` : "";
        story.say(
          "orchestra",
          `${issue} run ${r.id.slice(0, 8)} classified ${r.class} → ${r.recovery ?? "none"}${why}`,
          r.class === "phantom" ? "phantom" : undefined,
        );
      }
    }
    for (const t of now) {
      const before = tasks.get(t.issue);
      tasks.set(t.issue, t);
      if (before?.state === t.state) continue;
      if (t.state === "review") story.say("orchestra", `#${t.issue} in review: PR #${t.prNumber}, agent:review`);
      else if (t.state === "done") story.say("orchestra", `#${t.issue} done: PR #${t.prNumber} merged`, "done");
      else if (t.state === "queued" && before)
        story.say("orchestra", `#${t.issue} queued again for attempt ${t.attempt + 1}`);
      else if (t.state === "failed" || t.state === "blocked")
        story.say("orchestra", `#${t.issue} ${t.state}${t.diagnostic ? `: ${t.diagnostic}` : ""}`);
    }
    const resting = now.length > 0 && now.every((t) => t.state !== "queued" && t.state !== "claimed");
    return story.missing().length === 0 && resting && idle();
  };

  const loop = (async () => {
    let failing: string | null = null;
    while (!stopped) {
      try {
        if (await look()) resolveTold();
        failing = null;
      } catch (err) {
        // Said once, not at every look: the next look may well succeed.
        const why = err instanceof Error ? err.message : String(err);
        if (why !== failing && !stopped) story.say("demo", `cannot read the service's API: ${why}`);
        failing = why;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  return {
    told,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
