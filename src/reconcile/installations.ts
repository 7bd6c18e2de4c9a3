/**
 * Installation changes. Uninstalling or suspending the App, or removing a
 * repository from its installation, stops all work there: live leases are
 * revoked, open tasks cancelled with their history kept, pending GitHub
 * writes dropped (GitHub would refuse them), and sweeps skip it. Unsuspending
 * or installing again brings it back into reconcile. A renamed or transferred
 * repository keeps its tasks.
 */
import type { Logger } from "pino";
import type { Db } from "../store/db.js";
import type { Tasks } from "../apply/tasks.js";
import type { EventContext } from "../events/router.js";

/** Why Orchestra does not manage an installation now (uninstalled or suspended), or null: it does. */
export async function unmanagedInstallation(db: Pick<Db, "installation">, id: number): Promise<string | null> {
  const row = await db.installation.findUnique({ where: { id }, select: { deletedAt: true, suspendedAt: true } });
  if (row?.deletedAt) return "the App was uninstalled";
  if (row?.suspendedAt) return "the App's installation is suspended";
  return null;
}

export class InstallationHandlers {
  constructor(readonly deps: { db: Db; tasks: Tasks; clock: { now(): Date }; log: Logger }) {}

  async installation(ctx: EventContext<"installation">): Promise<void> {
    const { action, installation } = ctx.payload;
    const id = installation.id;
    const now = this.deps.clock.now();
    const base = { id, nextWriteAt: now, updatedAt: now };
    if (action === "deleted" || action === "suspend") {
      const mark = action === "deleted" ? { deletedAt: now } : { suspendedAt: now };
      await this.deps.db.installation.upsert({
        where: { id },
        create: { ...base, ...mark },
        update: { ...mark, updatedAt: now },
      });
      const stopped = await this.#stop(
        { installationId: id },
        action === "deleted" ? "the App was uninstalled" : "the App's installation was suspended",
      );
      this.deps.log.warn({ installationId: id, action, stopped }, "installation gone: work there stopped");
      return;
    }
    if (action === "unsuspend" || action === "created" || action === "new_permissions_accepted") {
      await this.deps.db.installation.upsert({
        where: { id },
        create: base,
        update: { suspendedAt: null, deletedAt: null, pausedUntil: null, failures: 0, updatedAt: now },
      });
      this.deps.log.info({ installationId: id, action }, "installation back: reconcile includes it again");
    }
  }

  async repositories(ctx: EventContext<"installation_repositories">): Promise<void> {
    const removed = ctx.payload.repositories_removed ?? [];
    for (const r of removed) {
      const name = r.full_name ?? null;
      if (!name) continue;
      await this.#stop({ repo: name }, `${name} was removed from the App's installation`);
      await this.deps.db.repo.deleteMany({ where: { id: name } });
    }
  }

  /** A renamed or transferred repository: its tasks follow it (matched by repository id, or by the old name). */
  async renamed(ctx: EventContext<"repository.renamed" | "repository.transferred">): Promise<void> {
    const { repository } = ctx.payload;
    const oldName =
      ctx.payload.action === "renamed" ? `${repository.owner.login}/${ctx.payload.changes.repository.name.from}` : null;
    const where = oldName ? { OR: [{ repoId: repository.id }, { repo: oldName }] } : { repoId: repository.id };
    const moved = await this.deps.db.task.updateMany({
      where,
      data: { repo: repository.full_name, repoId: repository.id },
    });
    if (oldName) await this.deps.db.repo.deleteMany({ where: { id: oldName } });
    this.deps.log.info(
      { repo: repository.full_name, from: oldName, tasks: moved.count },
      "repository renamed or transferred: its tasks follow it",
    );
  }

  async #stop(where: { installationId: number } | { repo: string }, why: string): Promise<number> {
    const { db, tasks } = this.deps;
    const open = await db.task.findMany({
      where: { ...where, state: { notIn: ["done", "cancelled"] } },
      select: { id: true },
    });
    for (const t of open) await tasks.raise({ taskId: t.id }, { kind: "installation-removed", why });
    // GitHub would refuse these writes now.
    const effects = "installationId" in where ? { installationId: where.installationId } : { repo: where.repo };
    await db.effect.updateMany({
      where: { ...effects, state: "pending" },
      data: { state: "dropped", note: why, doneAt: this.deps.clock.now() },
    });
    return open.length;
  }
}
