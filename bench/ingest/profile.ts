// Reading V8 CPU profiles (`node --cpu-prof`) of the targets: where the
// server's CPU time went, by self time, so the report can say which frames
// cost most rather than leave it to a profiler UI.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  /** `function (file:line)`, the file relative to the repository where it is inside it. */
  frame: string;
  selfMs: number;
  /** Share of all sampled time, idle included. */
  share: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Sampled time the process was not idle (V8's `(idle)` frame excluded). */
  busyMs: number;
  top: Frame[];
}

function frameName(f: CallFrame, root: string): string {
  const name = f.functionName || "(anonymous)";
  if (!f.url) return name;
  let file = f.url.replace(/^file:\/\//, "");
  if (file.startsWith(root)) file = relative(root, file);
  return `${name} (${file}:${f.lineNumber + 1})`;
}

/** Self time per frame, largest first. */
export function summariseProfile(file: string, root: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    totalUs += us;
    const node = byId.get(id);
    if (!node) return;
    if (node.callFrame.functionName === "(idle)") idleUs += us;
    const key = frameName(node.callFrame, root);
    self.set(key, (self.get(key) ?? 0) + us);
  });
  const frames = [...self.entries()]
    .filter(([k]) => k !== "(idle)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, share: totalUs > 0 ? us / totalUs : 0 }));
  return { file, totalMs: totalUs / 1000, busyMs: (totalUs - idleUs) / 1000, top: frames };
}

/** The one profile a target wrote into `dir`, or null when it wrote none. */
export function profileIn(dir: string): string | null {
  try {
    const found = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    return found.length > 0 ? join(dir, found.sort()[found.length - 1]!) : null;
  } catch {
    return null;
  }
}

export function formatProfile(label: string, p: ProfileSummary): string {
  const lines = [
    `[${label}] profile    ${p.top.length} frames with most self time (busy ${p.busyMs.toFixed(0)} ms of ${p.totalMs.toFixed(0)} ms sampled)`,
  ];
  for (const f of p.top) {
    const busyShare = p.busyMs > 0 ? (100 * f.selfMs) / p.busyMs : 0;
    lines.push(`    ${f.selfMs.toFixed(0).padStart(7)} ms ${busyShare.toFixed(1).padStart(5)}% of busy  ${f.frame}`);
  }
  return lines.join("\n");
}
