/**
 * The worker's looks at a worktree (every heartbeat, the progress watchdog)
 * run while the agent works in it: they must never take the index's lock,
 * or the agent's `git add` or the worker's handoff commit fails with
 * "index.lock: File exists". A plain `git status` does take it, to write the
 * index back after refreshing stale file times; the test makes the times
 * stale, checks that a plain status would rewrite the index, and that the
 * worker's look leaves it as it was.
 */
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitHandoff, worktreeFacts, worktreeState } from "../../src/runner/git.js";
import { gitIn } from "./scripted.js";

let dir: string;
const git = (...args: string[]) => gitIn(dir, ...args);
const index = () => statSync(join(dir, ".git", "index"));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "orchestra-git-look-"));
  git("init", "--quiet", "-b", "main");
  for (const f of ["a.txt", "b.txt"]) writeFileSync(join(dir, f), `${f}\n`);
  git("add", ".");
  git("commit", "--quiet", "-m", "first");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Gives the committed files times the index does not hold, so that git must refresh them. */
const staleTimes = () => {
  const then = new Date(Date.now() - 3_600_000);
  for (const f of ["a.txt", "b.txt"]) utimesSync(join(dir, f), then, then);
};

test("a plain git status rewrites the index when file times are stale (what the looks must not do)", () => {
  staleTimes();
  const before = index();
  git("status", "--porcelain");
  expect(index().ino).not.toBe(before.ino);
});

test.each([
  ["worktreeState", () => worktreeState(dir, "HEAD")],
  ["worktreeFacts", () => worktreeFacts(dir, "HEAD")],
])("%s answers without writing the index", async (_what, look) => {
  staleTimes();
  writeFileSync(join(dir, "wip.txt"), "wip\n");
  const before = index();
  const state = await look();
  expect(state).toMatchObject({ dirty: true, ahead: 0, headSha: git("rev-parse", "HEAD") });
  expect(state.entries.map((e) => e.path)).toEqual(["wip.txt"]);
  const after = index();
  expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
});

test("the handoff commit goes through while the worktree is being looked at", async () => {
  staleTimes();
  writeFileSync(join(dir, "wip.txt"), "wip\n");
  let looking = true;
  const looks = (async () => {
    let n = 0;
    while (looking) n += (await worktreeFacts(dir, "HEAD")) ? 1 : 0;
    return n;
  })();
  try {
    expect(await commitHandoff(dir, "idle")).toBe(true);
  } finally {
    looking = false;
  }
  expect(await looks).toBeGreaterThan(0);
  expect(git("log", "-1", "--format=%(trailers:key=Orchestra-Handoff,valueonly)")).toBe("idle");
  expect(git("status", "--porcelain")).toBe("");
});
