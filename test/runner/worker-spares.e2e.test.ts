/**
 * `orchestra worker --once` twice in one workdir on real git: the first run's
 * worktree, its work pushed, is kept as a spare, and the second run starts in
 * it. The second run must see what a new worktree would show: the default
 * branch as it is now (or its own branch with its work, for a continuation),
 * nothing the first run left that git does not track, and nothing that hides
 * a change from git. The agents record what they saw; assertions are on that
 * and on the bare repository.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claimOnce, gitIn, once, refOf, rig, type Rig } from "./scripted.js";

let r: Rig;
afterEach(async () => r?.cleanup());

const BRANCH = "agent/12-fix-the-parser";
const mirror = () => join(r.workdir, "mirrors", "acme", "app.git");
const spares = () => readdirSync(join(r.workdir, "spares", "acme", "app"));

/** A second run of the repository, on issue 13 (or on `branch` with `continuation`). */
const second = (over: { branch?: string; continuation?: unknown } = {}) =>
  r.claimAnswer({
    task: { id: "t2", issue: 13, title: "Second" },
    run: {
      id: "run-2",
      leaseEpoch: "epoch-2",
      branch: over.branch ?? "agent/13-second",
      continuation: over.continuation ?? null,
    },
  });

/** What the agent saw at its start, in `$HOME/seen-<issue>.txt`: head, branch, upstream, status with ignored files. */
const SEEN = [
  'seen="$HOME/seen-$ORCHESTRA_ISSUE.txt"',
  'git rev-parse HEAD > "$seen"',
  'git branch --show-current >> "$seen"',
  'git rev-parse --abbrev-ref "@{upstream}" >> "$seen" 2>/dev/null || echo "no upstream" >> "$seen"',
  'git status --porcelain --ignored --untracked-files=all >> "$seen"',
  'cat .git > "$HOME/gitdir-$ORCHESTRA_ISSUE.txt"',
].join("\n");

const seen = (issue: number) =>
  readFileSync(join(r.root, `seen-${issue}.txt`), "utf8")
    .trim()
    .split("\n");
const gitdir = (issue: number) => readFileSync(join(r.root, `gitdir-${issue}.txt`), "utf8");

/** The rig's seed clone pushes one more commit to main, as someone merging meanwhile. */
function mainMoves(): string {
  const seed = join(r.root, "seed");
  writeFileSync(join(seed, "merged.txt"), "merged meanwhile\n");
  gitIn(seed, "add", "merged.txt");
  gitIn(seed, "commit", "--quiet", "-m", "merged meanwhile");
  gitIn(seed, "push", "--quiet", r.bare, "main");
  return refOf(r.bare, "refs/heads/main")!;
}

test("the next run starts in the spare as in a new worktree: main as it is now, nothing the last run left", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  // The first run leaves what git does not track: build output it ignores, files of its own in .orchestra/.
  const first = r.agent(
    "first",
    [
      SEEN,
      "echo 'build/' > .gitignore",
      "echo fixed > parser.txt",
      "git add .gitignore parser.txt",
      "git commit -q -m 'Fix the parser'",
      "mkdir -p build && echo out > build/out.txt",
      "echo notes > .orchestra/notes.md",
    ].join("\n"),
  );
  expect((await once(r, ["--agent", first])).code).toBe(0);
  expect(refOf(r.bare, `refs/heads/${BRANCH}`)).toMatch(/^[0-9a-f]{40}$/);
  expect(spares()).toHaveLength(1);
  expect(gitIn(mirror(), "branch", "--list")).toBe("");

  const main = mainMoves();
  claimOnce(r, second());
  const next = r.agent("next", `${SEEN}\necho second > second.txt\ngit add second.txt\ngit commit -q -m second`);
  const res = await once(r, ["--agent", next]);
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: "" });

  // The same worktree (its git directory is still the first run's), seen as the first run saw its new one.
  expect(gitdir(13)).toBe(gitdir(12));
  expect(seen(12)).toEqual([refOf(r.bare, "refs/heads/main~1"), BRANCH, "no upstream", "!! .orchestra/task.md"]);
  expect(seen(13)).toEqual([main, "agent/13-second", "no upstream", "!! .orchestra/task.md"]);
  expect(gitIn(r.bare, "ls-tree", "--name-only", "refs/heads/agent/13-second")).toBe(
    "README.md\nmerged.txt\nsecond.txt",
  );
  // Parked again, detached; neither run's branch is left in the mirror.
  expect(spares()).toHaveLength(1);
  expect(gitIn(mirror(), "branch", "--list")).toBe("");
});

test("a continuation in the spare: the existing branch checked out with its work, on its upstream", async () => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  const first = r.agent("first", "echo 'first try' > parser.txt\ngit add parser.txt\ngit commit -q -m 'first try'");
  expect((await once(r, ["--agent", first])).code).toBe(0);
  const pushed = refOf(r.bare, `refs/heads/${BRANCH}`)!;
  mainMoves();

  const continuation = { kind: "fix-checks", prNumber: 7, headSha: pushed, checks: [] };
  claimOnce(r, second({ branch: BRANCH, continuation }));
  const fix = r.agent(
    "fix",
    `${SEEN}\ncat parser.txt > "$HOME/parser-seen.txt"\necho fixed > parser.txt\ngit commit -q -am fix`,
  );
  const res = await once(r, ["--agent", fix]);
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: "" });

  expect(seen(13)).toEqual([pushed, BRANCH, `origin/${BRANCH}`, "!! .orchestra/task.md"]);
  expect(readFileSync(join(r.root, "parser-seen.txt"), "utf8")).toBe("first try\n");
  const head = refOf(r.bare, `refs/heads/${BRANCH}`)!;
  expect(gitIn(r.bare, "rev-parse", `${head}^`)).toBe(pushed);
});

test.each([
  ["a change hidden by assume-unchanged", "git update-index --assume-unchanged README.md\necho hidden >> README.md"],
  ["a change hidden by skip-worktree", "git update-index --skip-worktree README.md\necho hidden >> README.md"],
  ["a bisect left started", "git bisect start"],
])("a spare with %s is not reused but removed; the next run gets a new worktree", async (_what, leftover) => {
  r = await rig();
  claimOnce(r, r.claimAnswer());
  const first = r.agent("first", `${SEEN}\necho x > x.txt\ngit add x.txt\ngit commit -q -m x\n${leftover}`);
  expect((await once(r, ["--agent", first])).code).toBe(0);
  expect(spares()).toHaveLength(1);

  claimOnce(r, second());
  const next = r.agent("next", `${SEEN}\ncp README.md "$HOME/readme-seen.md"`);
  const res = await once(r, ["--agent", next]);
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: "" });
  expect(gitdir(13)).not.toBe(gitdir(12));
  expect(readFileSync(join(r.root, "readme-seen.md"), "utf8")).toBe("# app\n");
  expect(seen(13)).toEqual([
    refOf(r.bare, "refs/heads/main"),
    "agent/13-second",
    "no upstream",
    "!! .orchestra/task.md",
  ]);
  // The run changed nothing: its new worktree is the spare now, the refused one is gone.
  expect(gitIn(mirror(), "worktree", "list").split("\n")).toHaveLength(2);
});
