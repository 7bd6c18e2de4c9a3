/**
 * Issue dependencies: a task is not claimable while GitHub lists open issues
 * that block it ("blocked by"). Blockers are read when the task is queued
 * (an issue whose payload says it has none costs no call), again on every
 * `issue_dependencies` event about it and whenever an issue it waits on
 * closes, and by the sweep — for tasks never read (GitHub was down at queue
 * time) and, every few minutes, for blocked ones, in case an event was missed
 * or the blocker lives where the App is not installed. Each read is raised as
 * one event; the machine records it on the task. On a host without issue
 * dependencies (GHES before 3.19, github/hosts.ts) every read finds none and
 * says why: there is no dependency gate there, never a gate that holds
 * forever.
 */
import type { Logger } from "pino";
import type { BlockerQueries } from "./queries.js";
import { repoRef, type GitHubFor } from "../github/port.js";
import type { HostFeatures, HostGitHub } from "../github/features.js";
import { errorText } from "../github/errors.js";
import type { Tasks } from "../apply/tasks.js";
import type { Task } from "../store/generated/sqlite/client.js";

/** How a blocker is named on the task: owner/repo#n. */
export const blockerRef = (repo: string, issue: number) => `${repo}#${issue}`;

/** A blocked task's blockers are read again after this long (the events usually come first). */
export const BLOCKED_RECHECK_MS = 5 * 60_000;
/** Tasks per sweep whose blockers are read. */
const BATCH = 20;

/** The payload's own count of open blockers, when GitHub sent one. */
export function openBlockersInPayload(issue: {
  issue_dependencies_summary?: { blocked_by?: number } | null;
}): number | null {
  const n = issue.issue_dependencies_summary?.blocked_by;
  return typeof n === "number" ? n : null;
}

/** The open issues blocking an issue; `unsupported` says why none are read on this host (its fallback). */
export interface OpenBlockers {
  blockers: string[];
  unsupported?: string;
}

export interface BlockersDeps {
  queries: BlockerQueries;
  tasks: Tasks;
  githubFor: GitHubFor;
  /** What the host lacks: on one without issue dependencies, blockers are read as none (hosts.ts). */
  features: HostFeatures;
  clock: { now(): Date };
  log: Logger;
}

export class Blockers {
  constructor(readonly deps: BlockersDeps) {}

  /** The open issues blocking `issue`, read from GitHub; none, and why, on a host without issue dependencies. */
  async read(github: HostGitHub, repo: string, issue: number): Promise<OpenBlockers> {
    const read = await this.deps.features.blockedBy(github, repoRef(repo), issue);
    if ("unsupported" in read) return { blockers: [], unsupported: `${read.unsupported.title}: not on this host` };
    return {
      blockers: read.blockers.filter((b) => b.state === "open").map((b) => blockerRef(b.repo, b.number)),
    };
  }

  /** Reads the task's blockers from GitHub and records them. */
  async refresh(task: Pick<Task, "id" | "installationId" | "repo" | "issue">, github?: HostGitHub): Promise<string[]> {
    const gh = github ?? (await this.deps.githubFor(task.installationId));
    const { blockers, unsupported } = await this.read(gh, task.repo, task.issue);
    await this.deps.tasks.raise(
      { taskId: task.id },
      { kind: "blockers-read", blockers, ...(unsupported ? { unsupported } : {}) },
    );
    return blockers;
  }

  /** An `issue_dependencies` event about this issue: read its blockers again (the payload names one, not all). */
  async onDependencyChanged(repo: string, issue: number, github: HostGitHub): Promise<void> {
    const task = await this.deps.queries.taskOfIssue(repo, issue);
    if (!task || task.state === "done" || task.state === "cancelled") return;
    await this.refresh(task, github);
  }

  /** An issue closed (or reopened): every task that lists it as a blocker is read again. */
  async onIssueStateChanged(repo: string, issue: number, github: HostGitHub): Promise<number> {
    const ref = blockerRef(repo, issue);
    const waiting = await this.deps.queries.blockedByRef(ref);
    for (const task of waiting) await this.refresh(task, github);
    return waiting.length;
  }

  /** Sweep: tasks whose blockers were never read, and blocked ones not read for a while. */
  async sweep(notHeld: object): Promise<{ read: number; errors: number }> {
    const now = this.deps.clock.now();
    const due = await this.deps.queries.dueForBlockers(
      notHeld,
      now,
      new Date(now.getTime() - BLOCKED_RECHECK_MS),
      BATCH,
    );
    let read = 0;
    let errors = 0;
    for (const task of due) {
      try {
        await this.refresh(task);
        read++;
      } catch (err) {
        errors++;
        // This task waits; the others go on (a broken one never holds the head of the list).
        const retryAt = new Date(now.getTime() + 60_000);
        await this.deps.tasks
          .raise({ taskId: task.id }, { kind: "sweep-failed", why: `reading its blockers: ${errorText(err)}`, retryAt })
          .catch(() => {});
        this.deps.log.warn(
          { task: task.id, err: errorText(err) },
          "sweep: could not read the issue's blockers; it stays unclaimable until they are read",
        );
      }
    }
    return { read, errors };
  }
}
