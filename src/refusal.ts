/**
 * A request the domain refuses, as a typed outcome: the rooms below the HTTP
 * layer throw it, and the HTTP layer (http/router.ts, api/idempotency.ts)
 * maps its kind to a status. `extra` rides along in the answer's body
 * (`reason`, `retryable`), so a worker can tell a lease it lost from a busy
 * task it may try again.
 */
export type RefusalKind = "invalid" | "forbidden" | "not-found" | "conflict" | "unavailable";

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * A lease the machine no longer holds for this caller. Only `busy` is worth
 * sending again as it is; every other reason means the lease is gone and the
 * worker must drop the run's work.
 */
export function leaseRefused(message: string, reason: string): Refusal {
  return new Refusal("conflict", message, { reason, retryable: reason === "busy" });
}

/** True for a refusal because the lease ended another way (a conflict), which a caller acting for the App ignores. */
export function isLeaseRefusal(err: unknown): err is Refusal {
  return err instanceof Refusal && err.kind === "conflict";
}
