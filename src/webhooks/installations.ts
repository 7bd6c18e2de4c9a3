/**
 * Installation changes. Uninstalling or suspending the App, or removing a
 * repository from its installation, stops all work there: live leases are
 * revoked, open tasks cancelled with their history kept, pending GitHub
 * writes dropped (GitHub would refuse them), and sweeps skip it. Unsuspending
 * or installing again brings it back into reconcile. A renamed or transferred
 * repository keeps its tasks.
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
  outbox: Pick<Outbox, "dropPending">;
  gates: Pick<RepoGates, "forget">;
  clock: { now(): Date };
  log: Logger;
}

export class InstallationHandlers {
  constructor(readonly deps: InstallationDeps) {}

  async installation(ctx: EventContext<"installation">): Promise<void> {
    const { action, installation } = ctx.payload;
    const id = installation.id;
    if (action === "deleted" || action === "suspend") {
      await this.deps.installations.gone(id, action === "deleted" ? "deleted" : "suspended");
      const stopped = await this.#stop(
        { installationId: id },
        action === "deleted" ? "the App was uninstalled" : "the App's installation was suspended",
      );
      this.deps.log.warn({ installationId: id, action, stopped }, "installation gone: work there stopped");
      return;
    }
    if (action === "unsuspend" || action === "created" || action === "new_permissions_accepted") {
      await this.deps.installations.back(id);
      this.deps.log.info({ installationId: id, action }, "installation back: reconcile includes it again");
    }
  }

  async repositories(ctx: EventContext<"installation_repositories">): Promise<void> {
    const removed = ctx.payload.repositories_removed ?? [];
    for (const r of removed) {
      const name = r.full_name ?? null;
      if (!name) continue;
      await this.#stop({ repo: name }, `${name} was removed from the App's installation`);
      await this.deps.gates.forget(name);
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

  async #stop(where: { installationId: number } | { repo: string }, why: string): Promise<number> {
    const { tasks, outbox, clock } = this.deps;
    const open = await tasks.openIn(where);
    for (const taskId of open) await tasks.raise({ taskId }, { kind: "installation-removed", why });
    await outbox.dropPending(where, why, clock.now());
    return open.length;
  }
}
