/**
 * One line of `orchestra doctor`: a check's name, how it came out, what was
 * found, and for a failure what to do. `skip`: not run, because a check it
 * depends on failed (the line says which).
 */
export type Status = "ok" | "warn" | "fail" | "skip";

export interface Check {
  name: string;
  status: Status;
  detail: string;
  fix?: string;
}

const TAG: Record<Status, string> = { ok: "ok", warn: "warn", fail: "FAIL", skip: "skip" };

/** The human form: the status tag, the name and the detail; more lines of detail and the fix indented under it. */
export function checkText(c: Check): string {
  const [first, ...more] = c.detail.split("\n");
  const lines = [`${TAG[c.status].padEnd(5)} ${c.name}: ${first}`, ...more.map((l) => `      ${l}`)];
  if (c.fix) lines.push(`      fix: ${c.fix}`);
  return `${lines.join("\n")}\n`;
}

/** 0 when nothing failed (warnings allowed), 1 otherwise. */
export const exitCodeOf = (checks: readonly Check[]): number => (checks.some((c) => c.status === "fail") ? 1 : 0);

export function summaryText(checks: readonly Check[]): string {
  const n = (s: Status) => checks.filter((c) => c.status === s).length;
  const [fail, warn, skip] = [n("fail"), n("warn"), n("skip")];
  if (fail === 0) return `all ${checks.length} checks passed${warn ? `, ${warn} with a warning` : ""}\n`;
  return (
    `${fail} of ${checks.length} checks failed` +
    `${warn ? `, ${warn} warned` : ""}${skip ? `, ${skip} not run` : ""}\n`
  );
}
