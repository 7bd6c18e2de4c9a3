/**
 * What GitHub already told Orchestra, kept so that a write whose decision
 * destroys nothing need not ask again: the labels an issue carried in the
 * last webhook about it (or in the answer to Orchestra's own label write),
 * and the id of Orchestra's check run on a commit (from the answer to its
 * creation). A hint, never evidence: a label is removed and a branch deleted
 * only on what GitHub answers right before, and reconcile reads GitHub to
 * find what drifted from it.
 */
import type { IssueLabel } from "../github/port.js";
import type { SeenQueries } from "./queries.js";

const names = (labels: unknown): string[] | null =>
  Array.isArray(labels)
    ? labels.flatMap((l: unknown) => {
        if (typeof l === "string") return [l];
        const name = (l as { name?: unknown } | null)?.name;
        return typeof name === "string" ? [name] : [];
      })
    : null;

/** The labels of a delivery (or an answer) that carry their node id, keyed by the lowercased name. */
const withIds = (labels: readonly unknown[]): IssueLabel[] =>
  labels.flatMap((l: unknown) => {
    const { name, node_id: id, nodeId } = (l ?? {}) as { name?: unknown; node_id?: unknown; nodeId?: unknown };
    const node = typeof id === "string" ? id : nodeId;
    return typeof name === "string" && typeof node === "string" && node
      ? [{ name: name.toLowerCase(), nodeId: node }]
      : [];
  });

/** What a label swap names the issue and its labels by (the node ids), those known. */
export interface NodeIds {
  issue: string | null;
  /** by lowercased label name */
  labels: ReadonlyMap<string, string>;
}

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

  /**
   * The issue's labels as GitHub just said; the node ids among them (labels from an answer or a delivery carry
   * theirs) are kept for the repository, and the issue's own when given.
   */
  async sawLabels(
    repo: string,
    issue: number,
    labels: ReadonlyArray<string | IssueLabel>,
    issueNodeId?: string,
  ): Promise<void> {
    const now = this.clock.now();
    await this.queries.setLabels(repo, issue, JSON.stringify(names(labels)), now, issueNodeId);
    await this.queries.setLabelNodes(repo, withIds(labels), now);
  }

  /** The repository's labels as GitHub just named them, with their node ids. */
  sawLabelIds(repo: string, labels: readonly IssueLabel[]): Promise<void> {
    return this.queries.setLabelNodes(repo, withIds(labels), this.clock.now());
  }

  /** Forgotten when GitHub is found to differ from what was said (reconcile's drift): the next write reads. */
  forgetLabels(repo: string, issue: number): Promise<void> {
    return this.queries.forgetLabels(repo, issue);
  }

  /** The node ids of the issue and of the labels named, those GitHub gave. */
  async nodeIds(repo: string, issue: number, labels: readonly string[]): Promise<NodeIds> {
    const [node, known] = await Promise.all([
      this.queries.issueNodeOf(repo, issue),
      this.queries.labelNodesOf(
        repo,
        labels.map((l) => l.toLowerCase()),
      ),
    ]);
    return { issue: node, labels: new Map(known.map((l) => [l.name, l.nodeId])) };
  }

  /**
   * GitHub answered that one of these nodes is not there (a label deleted and made again, the issue gone): the
   * labels' ids and what was said of the issue's labels are forgotten, so the next write reads and names labels by
   * name. The issue's own id is kept: it names the issue for as long as the issue is there.
   */
  async forgetNodeIds(repo: string, issue: number, labels: readonly string[]): Promise<void> {
    await this.queries.setLabels(repo, issue, "null", this.clock.now());
    await this.queries.forgetLabelNodes(
      repo,
      labels.map((l) => l.toLowerCase()),
    );
  }

  /**
   * What a delivery says of an issue's labels (`issues`, `issue_comment`): kept as the issue's latest, with the
   * node ids of the issue and of every label it shows (the one a `labeled` or `unlabeled` names too).
   */
  async observe(payload: unknown): Promise<void> {
    const p = payload as {
      repository?: { full_name?: unknown };
      issue?: { number?: unknown; labels?: unknown; node_id?: unknown };
      label?: unknown;
    };
    const repo = p.repository?.full_name;
    const issue = p.issue?.number;
    const labels = p.issue?.labels;
    if (typeof repo !== "string" || typeof issue !== "number" || !Array.isArray(labels)) return;
    const node = typeof p.issue?.node_id === "string" && p.issue.node_id ? p.issue.node_id : undefined;
    await this.sawLabels(repo, issue, labels as Array<string | IssueLabel>, node);
    // The label an `unlabeled` names is no longer on the issue, but its id is still the repository's.
    if (p.label) await this.queries.setLabelNodes(repo, withIds([p.label]), this.clock.now());
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
