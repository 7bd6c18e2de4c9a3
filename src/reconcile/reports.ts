/** The kinds of sweep report the reconcile room records (also the CLI's choices for `orchestra sweeps --kind`). */
export const SWEEP_KINDS = ["reconcile", "reconcile-escalated", "reconcile-recovered", "deliveries"] as const;
export type SweepKind = (typeof SWEEP_KINDS)[number];
