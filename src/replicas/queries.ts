/** What the replicas room reads and writes: one row per running replica and its last beat. */
import type { Db } from "../store/db.js";
import type { Replica } from "../store/generated/sqlite/client.js";

export interface ReplicaQueries {
  /** Writes this replica's beat, creating its row when it has none (first beat, or forgotten while it was silent). */
  beat(r: Replica): Promise<void>;
  /** Every replica's row. */
  replicas(): Promise<Replica[]>;
  /** Deletes a replica's row unless it beat again since `beatAt` (it came back). */
  forget(id: string, beatAt?: Date): Promise<void>;
}

export function replicaQueries(db: Db): ReplicaQueries {
  return {
    async beat(r) {
      await db.replica.upsert({ where: { id: r.id }, create: r, update: { beatAt: r.beatAt } });
    },
    replicas: () => db.replica.findMany({ orderBy: { startedAt: "asc" } }),
    async forget(id, beatAt) {
      await db.replica.deleteMany({ where: { id, ...(beatAt ? { beatAt } : {}) } });
    },
  };
}
