/**
 * What the effects room reads and writes: the outbox's effect rows
 * (effects/outbox.ts), each installation's pace and holds
 * (effects/installations.ts), and the task, its runs and its receipt that an
 * effect is performed on and its check run shows (effects/executor.ts,
 * effects/check-run-view.ts), and what GitHub already said (effects/seen.ts).
 * The room's classes take this interface, not the client. Each reader's part is
 * in queries/ (outbox.ts, installations.ts, check-run.ts, seen.ts); this module
 * composes them.
 */
import type { Db } from "../store/db.js";
import type { Run } from "../store/generated/sqlite/client.js";
import { outboxQueries, type OutboxQueries } from "./queries/outbox.js";
import { installationQueries, type InstallationQueries } from "./queries/installations.js";
import { checkRunQueries, type CheckRunQueries } from "./queries/check-run.js";

export { HELD, type OutboxQueries } from "./queries/outbox.js";
export type { InstallationQueries } from "./queries/installations.js";
export type { CheckRunQueries } from "./queries/check-run.js";
export { seenQueries, type SeenQueries } from "./queries/seen.js";

export interface EffectsQueries extends OutboxQueries, InstallationQueries, CheckRunQueries {
  run(id: string): Promise<Run | null>;
}

export function effectsQueries(db: Db): EffectsQueries {
  return {
    ...outboxQueries(db),
    ...installationQueries(db),
    ...checkRunQueries(db),
    run: (id) => db.run.findUnique({ where: { id } }),
  };
}
