/**
 * `orchestra effects` and `orchestra ignored`: the GitHub writes Orchestra
 * recorded (a parked one with its last error), and the counters of input it
 * ignored.
 */
export interface EffectsAnswer {
  counts: Record<string, number>;
  effects: Array<{
    id: string;
    task: string | null;
    kind: string;
    state: string;
    attempts: number;
    note: string | null;
    errors: Array<{ message: string }>;
  }>;
}

export function effectsText(body: EffectsAnswer): string {
  let text = `counts: ${
    Object.entries(body.counts)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ") || "none"
  }\n`;
  for (const e of body.effects) {
    const last = e.errors[e.errors.length - 1]?.message;
    const why =
      e.state === "parked" || e.state === "pending"
        ? last
          ? `  last error: ${last}`
          : ""
        : e.note
          ? `  ${e.note}`
          : "";
    text += `${e.id}  ${e.kind}  ${e.state}  attempts=${e.attempts}  task=${e.task ?? "-"}${why}\n`;
  }
  return text;
}

export interface IgnoredAnswer {
  counters: Array<{ name: string; value: number; updatedAt: string | null; what: string }>;
}

export function ignoredText(body: IgnoredAnswer): string {
  const width = Math.max(0, ...body.counters.map((c) => c.name.length));
  return body.counters
    .map(
      (c) =>
        `${c.name.padEnd(width)}  ${String(c.value).padStart(6)}  ` +
        `${c.updatedAt ? `last ${c.updatedAt}` : "never"}  ${c.what}\n`,
    )
    .join("");
}
