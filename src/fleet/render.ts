/**
 * The body of a repository's "Orchestra fleet" issue, from a snapshot of its
 * tasks: the queue in claim order with what each queued task waits for, the
 * live leases, what is in review, blocked tasks with their question or
 * escalation, failed tasks with their last failure class, and a footer. Pure:
 * the same snapshot and time give the same text, which is how an issue that
 * already shows a snapshot is left unedited.
 */
import type { WaitingFor } from "../gates/waiting.js";
import { fitted, GITHUB_COMMENT_LIMIT } from "../texts/limits.js";

export const FLEET_TITLE = "Orchestra fleet";
/** Opens the first line of the body; the rest of that line is when the body was rendered. */
const MARKER = "<!-- orchestra:fleet";
/** Rows shown per section; a longer section ends with how many more there are. */
export const FLEET_SECTION_ROWS = 100;

export interface Section<T> {
  /** Tasks in the section in all (may be more than `tasks`). */
  total: number;
  tasks: T[];
}

interface Row {
  issue: number;
  title: string;
}

export interface FleetSnapshot {
  repo: string;
  /** What holds every claim in the repository (a pause, an invalid configuration), or null. */
  held: string | null;
  /** In claim order. */
  queued: Section<Row & { attempt: number; waitingFor: WaitingFor | null }>;
  claimed: Section<Row & { attempt: number; worker: string | null; mode: string; leaseExpiresAt: Date | null }>;
  review: Section<Row & { prNumber: number | null }>;
  blocked: Section<Row & { why: string }>;
  failed: Section<Row & { attempt: number; klass: string | null; recovery: string | null }>;
}

/**
 * Text from titles, questions and diagnostics, made safe for one table cell: one line, no pipes, no mentions, bounded.
 */
export function cell(text: string, max = 120): string {
  const flat = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/\|/g, "\\|")
    .replace(/@(?=\w)/g, "@\u200b")
    .replace(/</g, "&lt;");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const issueCell = (r: Row) => `#${r.issue} ${cell(r.title, 80)}`;
/** A failed task's class in code, with its recovery when one was named. */
const classCell = (t: { klass: string | null; recovery: string | null }) =>
  t.klass ? `\`${t.klass}\`${t.recovery ? ` (${t.recovery})` : ""}` : "—";

/** A lease's time left as of `at`. */
export function timeLeft(expiresAt: Date, at: Date): string {
  const ms = expiresAt.getTime() - at.getTime();
  if (ms <= 0) return "expired: waiting for a late exit, then the run is classified";
  if (ms < 60_000) return "under a minute left";
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min} min left`;
  return `${Math.floor(min / 60)} h ${min % 60} min left`;
}

function table<T>(
  s: Section<T>,
  head: string[],
  align: string[],
  row: (t: T, i: number) => string[],
  none: string,
): string[] {
  if (s.total === 0) return [none];
  const lines = [
    `| ${head.join(" | ")} |`,
    `|${align.map((a) => ` ${a} |`).join("")}`,
    ...s.tasks.map((t, i) => `| ${row(t, i).join(" | ")} |`),
  ];
  const more = s.total - s.tasks.length;
  if (more > 0)
    lines.push(
      "",
      `…and ${more} more (\`GET /api/v1/tasks\` in Orchestra's operator API, ` +
        "or `orchestra tasks`, lists them all).",
    );
  return lines;
}

const waiting = (w: WaitingFor | null) => (w ? `\`${w.gate}\`: ${cell(w.detail, 200)}` : "nothing: claimable now");

function sections(s: FleetSnapshot, at: Date): string[] {
  return [
    `### Queue (${s.queued.total})`,
    "",
    ...(s.queued.total > 0
      ? ["In claim order: by priority label (`priorityLabels`), then the longest queued first.", ""]
      : []),
    ...table(
      s.queued,
      ["", "issue", "attempt", "waiting for"],
      ["---:", "---", "---:", "---"],
      (t, i) => [String(i + 1), issueCell(t), String(t.attempt), waiting(t.waitingFor)],
      "Nothing is queued.",
    ),
    "",
    `### In progress (${s.claimed.total})`,
    "",
    ...table(
      s.claimed,
      ["issue", "worker", "attempt", "lease"],
      ["---", "---", "---:", "---"],
      (t) => [
        issueCell(t),
        t.worker ? cell(t.worker, 60) : t.mode === "dispatch" ? "workflow run" : "—",
        String(t.attempt),
        t.leaseExpiresAt ? timeLeft(t.leaseExpiresAt, at) : "ended without an exit: the run is owed a class",
      ],
      "No task holds a lease.",
    ),
    "",
    `### In review (${s.review.total})`,
    "",
    ...table(
      s.review,
      ["issue", "pull request"],
      ["---", "---"],
      (t) => [issueCell(t), t.prNumber === null ? "—" : `#${t.prNumber}`],
      "No pull request waits for review.",
    ),
    "",
    `### Blocked (${s.blocked.total})`,
    "",
    ...table(
      s.blocked,
      ["issue", "why"],
      ["---", "---"],
      (t) => [issueCell(t), cell(t.why, 300)],
      "Nothing is blocked.",
    ),
    "",
    `### Failed (${s.failed.total})`,
    "",
    ...table(
      s.failed,
      ["issue", "attempts", "last failure"],
      ["---", "---:", "---"],
      (t) => [issueCell(t), String(t.attempt), classCell(t)],
      "Nothing has failed.",
    ),
  ];
}

/** The whole body, rendered at `at`, within GitHub's limit on an issue body. */
export function renderFleet(s: FleetSnapshot, at: Date): string {
  const head = [
    `${MARKER} updated=${at.toISOString()} -->`,
    `Orchestra's agents in ${s.repo}: the queue, who is working on what, and what needs a person.`,
    "",
    ...(s.held ? [`> **Nothing is claimed here now:** ${cell(s.held, 300)}`, ""] : []),
  ].join("\n");
  const stamp = at.toISOString().replace("T", " ").slice(0, 19);
  const foot = [
    "",
    "---",
    `<sub>Last updated ${stamp} UTC. Maintained by Orchestra (\`fleetIssue: true\` in \`.github/orchestra.yml\`): ` +
      `rewritten as tasks change, so edits by hand are overwritten. ` +
      `Closing this issue stops the updates until it is reopened; \`fleetIssue: false\` stops them for good.</sub>`,
  ].join("\n");
  const middle = fitted(
    sections(s, at).join("\n"),
    GITHUB_COMMENT_LIMIT - head.length - foot.length - 2,
    "in Orchestra's operator API (GET /api/v1/tasks, or orchestra tasks)",
  );
  return `${head}\n${middle}\n${foot}`;
}

/** When the body was rendered, from its first line; null when it is not a fleet issue body. */
export function renderedAt(body: string): Date | null {
  const m = /^<!-- orchestra:fleet updated=([0-9T:.\-Z]+) -->/.exec(body);
  if (!m) return null;
  const t = Date.parse(m[1]!);
  return Number.isNaN(t) ? null : new Date(t);
}

/** Whether a body is an Orchestra fleet issue's. */
export function isFleetBody(body: string | null | undefined): boolean {
  return typeof body === "string" && body.startsWith(MARKER);
}

/**
 * Whether `body` already shows the snapshot: it is what rendering the
 * snapshot at the body's own time gives. Only the time of the update may
 * differ; anything else (a newer snapshot, an edit by hand) does not match.
 */
export function showsSnapshot(body: string, s: FleetSnapshot): boolean {
  const at = renderedAt(body);
  return at !== null && renderFleet(s, at) === body;
}
