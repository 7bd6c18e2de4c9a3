/**
 * `npm run demo` end to end, as someone runs it: the built demo
 * (dist/demo/run.js) as a child process, with the service, the simulated
 * GitHub and the worker it starts. Once it says the story is told, every step
 * is in the service's records (its API) and on its dashboard (signed in with
 * the link it printed); then SIGINT stops it, and nothing it started is left
 * running and its temporary directory is gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../support/orchestra.js";

const RUN = join(import.meta.dirname, "..", "..", "dist", "demo", "run.js");

/** Every process whose chain of parents leads to `pid` (Linux's /proc). */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may hold spaces and parentheses: the fields after its closing one are what is read.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // It exited while the list was read.
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) {
      if (parent !== p) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

/** Whether a process is running (a zombie, exited but not yet reaped, is not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("npm run demo", () => {
  let demo: ChildProcess | undefined;
  let started: number[] = [];
  afterAll(() => {
    // A failed test leaves nothing running either.
    for (const pid of [demo?.pid, ...started]) if (pid && alive(pid)) process.kill(pid, "SIGKILL");
  });

  test("within a minute: claims, the worker's PR, an infrastructure rerun, a phantom, a merge → done; SIGINT stops it all", async () => {
    demo = spawn(process.execPath, [RUN], { env: { PATH: process.env["PATH"]! }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    demo.stdout!.on("data", (b: Buffer) => (out += b.toString()));
    demo.stderr!.on("data", (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((resolve) => demo!.on("exit", (code) => resolve(code)));

    await eventually(
      () => {
        if (demo!.exitCode !== null) throw new Error(`the demo exited ${demo!.exitCode}:\n${out}\n${err}`);
        return out.includes("The story is told") ? true : undefined;
      },
      60_000,
      "the story to be told",
    );
    expect(err).toBe("");
    const url = /dashboard {2}(http:\/\/127\.0\.0\.1:\d+)\/dashboard\n/.exec(out)![1]!;
    const signIn = /sign in {4}(http:\/\/127\.0\.0\.1:\d+\/dashboard\/sign-in\/link\?code=\S+)/.exec(out)![1]!;
    const token = /admin {6}([0-9a-f]{64})/.exec(out)![1]!;
    const root = /data {7}(\S+)/.exec(out)![1]!;
    // The story said each step as it happened, in the order it happened for #1.
    const lines = out.split("\n");
    const at = (pattern: RegExp) => lines.findIndex((l) => pattern.test(l));
    const order = [
      /alice +queued #1 /,
      /orchestra +#1 claimed by worker demo-worker/,
      /worker +opened PR #\d+ from agent\/issue-1/,
      /ci +test on PR #\d+ failed: The hosted runner/,
      /orchestra +#1 the failure on PR #\d+ is infrastructure: reran the failed jobs/,
      /ci +test passed on the rerun/,
      /alice +merged PR #\d+/,
      /orchestra +#1 done: PR #\d+ merged/,
    ].map(at);
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(out).toMatch(/orchestra +#2 run \w+ classified phantom → delete-branch-requeue/);

    // What the service recorded, through its operator API.
    const api = async (path: string) =>
      (await fetch(url + path, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<any>;
    const { tasks } = await api("/api/v1/tasks");
    const byIssue = new Map<number, any>(tasks.map((t: any) => [t.issue, t]));
    expect([1, 2, 3].map((n) => byIssue.get(n)?.state)).toEqual(["done", "review", "review"]);
    const detail = async (issue: number) =>
      (await api(`/api/v1/tasks/${byIssue.get(issue).id}`)) as { runs: any[]; effects: any[] };
    const two = await detail(2);
    expect(two.runs.map((r) => [r.attempt, r.class])).toEqual([
      [1, "phantom"],
      [2, null],
    ]);
    const one = await detail(1);
    expect(one.effects.filter((e) => e.kind === "rerun-failed-jobs").map((e) => e.state)).toEqual(["done"]);

    // The dashboard, signed in with the printed link.
    const link = await fetch(signIn, { redirect: "manual" });
    expect(link.status).toBe(303);
    const cookie = link.headers.get("set-cookie")!.split(";")[0]!;
    const page = async (path: string) => {
      const res = await fetch(url + path, { redirect: "manual", headers: { cookie } });
      expect(res.status).toBe(200);
      return res.text();
    };
    const fleet = await page("/dashboard");
    expect(fleet).toContain('In review <span class="muted">(2)</span>');
    expect(fleet).toMatch(/Done lately[\s\S]*Greet people by name[\s\S]*PR #\d+/);
    expect(fleet).toContain("phantom");
    const first = await page(`/dashboard/tasks/${byIssue.get(1).id}`);
    expect(first).toContain("Completion receipt: PR #");
    expect(first).toContain("rerun-failed-jobs");
    const second = await page(`/dashboard/tasks/${byIssue.get(2).id}`);
    expect(second).toContain("<b>phantom</b>");

    // Ctrl-C: everything it started stops, and its directory goes.
    started = descendants(demo.pid!);
    expect(started.length).toBeGreaterThanOrEqual(2);
    demo.kill("SIGINT");
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve("still running after 30 s"), 30_000)));
    const code = await Promise.race([exited, late]);
    clearTimeout(timer);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toContain("Stopped.");
    expect(started.filter(alive)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  }, 120_000);
});
