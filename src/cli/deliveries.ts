/**
 * `orchestra deliveries`: how many deliveries are in each state (retrying
 * apart from fresh pending: a GitHub outage shows as retrying, not parked),
 * then the latest ones with their last error, or why one was ignored or
 * collapsed. A parked one says how to replay it.
 */
export interface DeliveriesAnswer {
  summary: Record<string, number>;
  deliveries: Array<{
    deliveryId: string;
    event: string;
    action: string | null;
    state: string;
    attempts: number;
    nextAttemptAt: string;
    firstFailedAt: string | null;
    /** Why it was ignored at ingest or collapsed into a later delivery (absent from older services). */
    note?: string | null;
    errors: Array<{ class: string; message: string }>;
  }>;
}

export function deliveriesText(body: DeliveriesAnswer): string {
  const lines = [
    `deliveries: ${Object.entries(body.summary)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")}`,
  ];
  for (const d of body.deliveries) {
    const failures = d.errors.filter((e) => e.class !== "parked");
    const last = failures[failures.length - 1]?.message;
    const since = d.firstFailedAt ? `  failing since ${d.firstFailedAt}` : "";
    const next = d.state === "retrying" ? `  next attempt ${d.nextAttemptAt}` : "";
    lines.push(
      `${d.deliveryId}  ${d.event}${d.action ? `.${d.action}` : ""}  ${d.state}  ` +
        `attempts=${d.attempts}${d.state === "retrying" || d.state === "parked" ? since : ""}` +
        `${next}${last ? `  last error: ${last}` : ""}${d.note ? `  ${d.note}` : ""}`,
    );
    const parked = d.state === "parked" ? d.errors.filter((e) => e.class === "parked").pop() : undefined;
    if (parked) lines.push(`  ${parked.message}`);
  }
  return `${lines.join("\n")}\n`;
}
