/**
 * What GitHub already told Orchestra, kept so that a write whose decision
 * destroys nothing need not ask again: the labels an issue carried in the
 * last webhook about it (or in the answer to Orchestra's own label write),
 * and the id of Orchestra's check run on a commit (from the answer to its
 * creation). A hint, never evidence: a label is removed and a branch deleted
 * only on what GitHub answers right before, and reconcile reads GitHub to
 * find what drifted from it.
 */
import type { SeenQueries } from "./queries.js";

const names = (labels: unknown): string[] | null =>
  Array.isArray(labels)
    ? labels.flatMap((l: unknown) => {
        if (typeof l === "string") return [l];
        const name = (l as { name?: unknown } | null)?.name;
        return typeof name === "string" ? [name] : [];
      })
    : null;

export class Seen {
  constructor(
    private readonly queries: SeenQueries,
    private readonly clock: { now(): Date },
  ) {}

  /** The labels an issue carried when GitHub last said, or null when it has not said. */
  async labels(repo: string, issue: number): Promise<string[] | null> {
    const json = await this.queries.labelsOf(repo, issue);
    return json === null ? null : names(JSON.parse(json));
  }

  sawLabels(repo: string, issue: number, labels: readonly string[]): Promise<void> {
    return this.queries.setLabels(repo, issue, JSON.stringify(labels), this.clock.now());
  }

  /** Forgotten when GitHub is found to differ from what was said (reconcile's drift): the next write reads. */
  forgetLabels(repo: string, issue: number): Promise<void> {
    return this.queries.forgetLabels(repo, issue);
  }

  /** What a delivery says of an issue's labels (`issues`, `issue_comment`): kept as the issue's latest. */
  async observe(payload: unknown): Promise<void> {
    const p = payload as { repository?: { full_name?: unknown }; issue?: { number?: unknown; labels?: unknown } };
    const repo = p.repository?.full_name;
    const issue = p.issue?.number;
    const labels = names(p.issue?.labels);
    if (typeof repo !== "string" || typeof issue !== "number" || labels === null) return;
    await this.sawLabels(repo, issue, labels);
  }

  /**
   * Orchestra's check run on a commit: its id; "creating" when a creation was begun and its answer never
   * recorded (it may exist: look on GitHub); null when Orchestra never began one there.
   */
  async checkRun(repo: string, headSha: string): Promise<number | "creating" | null> {
    const row = await this.queries.checkRunOf(repo, headSha);
    if (row === undefined) return null;
    return row.checkRunId === null ? "creating" : Number(row.checkRunId);
  }

  /** Recorded before a creation (null) and with its answer (the id). */
  sawCheckRun(repo: string, headSha: string, checkRunId: number | null): Promise<void> {
    return this.queries.setCheckRun(repo, headSha, checkRunId, this.clock.now());
  }
}
