/**
 * Installation changes. Uninstalling the App stops all work there for good:
 * live leases are revoked, open tasks cancelled with their history kept,
 * pending GitHub writes dropped (GitHub would refuse them), and sweeps skip
 * it. Suspending the installation, or removing a repository from it, only
 * pauses its tasks: nothing is claimed or dispatched there (`waitingFor:
 * access`), a live run — which could neither push nor open its pull request
 * — has its lease revoked and its task queued again, uncharged, and pending
 * writes wait. Unsuspending, or adding the repository back, resumes them.
 * A renamed or transferred repository keeps its tasks.
 */
import type { Logger } from "pino";
import type { Tasks } from "../apply/tasks.js";
import type { EventContext } from "../events/router.js";
import type { Installations } from "../effects/installations.js";
import type { Outbox } from "../effects/outbox.js";
import type { RepoGates } from "../gates/repos.js";

export interface InstallationDeps {
  tasks: Pick<Tasks, "raise" | "openIn" | "followRepository">;
  installations: Pick<Installations, "gone" | "back">;
  outbox: Pick<Outbox, "dropPending" | "hold">;
  gates: Pick<RepoGates, "forget" | "access">;
  clock: { now(): Date };
  log: Logger;
}

export class InstallationHandlers {
  constructor(readonly deps: InstallationDeps) {}

  async installation(ctx: EventContext<"installation">): Promise<void> {
    const { action, installation } = ctx.payload;
    const id = installation.id;
    if (action === "deleted") {
      await this.deps.installations.gone(id, "deleted");
      const stopped = await this.#stop({ installationId: id }, "the App was uninstalled");
      this.deps.log.warn({ installationId: id, action, stopped }, "installation gone: work there stopped");
      return;
    }
    if (action === "suspend") {
      // Held first: no claim slips in between, and the executor leaves its writes for later.
      await this.deps.installations.gone(id, "suspended");
      await this.deps.gates.access({ installationId: id }, "suspended");
      const paused = await this.#each({ installationId: id }, "access-lost", "the App's installation is suspended");
      const held = await this.deps.outbox.hold({ installationId: id }, true, this.deps.clock.now());
      this.deps.log.warn(
        { installationId: id, paused, held },
        "installation suspended: its tasks wait until it is unsuspended",
      );
      return;
    }
    if (action === "unsuspend" || action === "created" || action === "new_permissions_accepted") {
      await this.deps.installations.back(id);
      if (action === "unsuspend") {
        await this.deps.gates.access({ installationId: id }, null);
        await this.deps.outbox.hold({ installationId: id }, false, this.deps.clock.now());
        await this.#each({ installationId: id }, "access-restored", "the App's installation was unsuspended");
      }
      this.deps.log.info({ installationId: id, action }, "installation back: reconcile includes it again");
    }
  }

  async repositories(ctx: EventContext<"installation_repositories">): Promise<void> {
    const { gates, outbox, clock } = this.deps;
    const installationId = ctx.payload.installation.id;
    for (const r of ctx.payload.repositories_removed ?? []) {
      const repo = r.full_name ?? null;
      if (!repo) continue;
      await gates.access({ installationId, repo }, "removed");
      const paused = await this.#each({ repo }, "access-lost", `${repo} was removed from the App's installation`);
      const held = await outbox.hold({ repo }, true, clock.now());
      this.deps.log.warn({ repo, paused, held }, "repository removed from the installation: its tasks wait for it");
    }
    for (const r of ctx.payload.repositories_added ?? []) {
      const repo = r.full_name ?? null;
      if (!repo) continue;
      await gates.access({ installationId, repo }, null);
      await outbox.hold({ repo }, false, clock.now());
      await this.#each({ repo }, "access-restored", `${repo} was added back to the App's installation`);
    }
  }

  /** A renamed or transferred repository: its tasks follow it (matched by repository id, or by the old name). */
  async renamed(ctx: EventContext<"repository.renamed" | "repository.transferred">): Promise<void> {
    const { repository } = ctx.payload;
    const oldName =
      ctx.payload.action === "renamed" ? `${repository.owner.login}/${ctx.payload.changes.repository.name.from}` : null;
    const moved = await this.deps.tasks.followRepository(
      { repo: repository.full_name, repoId: repository.id },
      oldName,
    );
    if (oldName) await this.deps.gates.forget(oldName);
    this.deps.log.info(
      { repo: repository.full_name, from: oldName, tasks: moved },
      "repository renamed or transferred: its tasks follow it",
    );
  }

  /** Raises the event for every open task there; how many. */
  async #each(
    where: { installationId: number } | { repo: string },
    kind: "access-lost" | "access-restored",
    why: string,
  ): Promise<number> {
    const open = await this.deps.tasks.openIn(where);
    for (const taskId of open) await this.deps.tasks.raise({ taskId }, { kind, why });
    return open.length;
  }

  async #stop(where: { installationId: number } | { repo: string }, why: string): Promise<number> {
    const { tasks, outbox, clock } = this.deps;
    const open = await tasks.openIn(where);
    for (const taskId of open) await tasks.raise({ taskId }, { kind: "installation-removed", why });
    await outbox.dropPending(where, why, clock.now());
    return open.length;
  }
}
