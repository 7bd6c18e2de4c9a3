// The repository the worker benchmark runs on: a fake GitHub repository whose
// bare git repository gets a long history written straight into it with
// `git fast-import` (seconds, where 5,000 pushes would take many minutes),
// repacked as a host keeps it (one pack, fresh deltas, reachability bitmaps), then read back
// into the fake's model so that its REST answers agree with git.
//
// The tree is source-like: `--files` files of text lines spread over folders of
// about 20, sizes spread around `--file-kb`; the first imported commit adds
// them all, and every later one changes a few lines in `--touch` of them (now
// and then adding lines), so that the pack's deltas look like a real
// project's.
import { spawn } from "node:child_process";
import type { FakeGitHub } from "../../test/fake-github/index.js";
import { syncFromGit } from "../../test/fake-github/git/sync.js";

export interface HistorySpec {
  /** commits on the default branch, the fake's initial commit included */
  commits: number;
  files: number;
  /** mean file size in KB */
  fileKb: number;
  /** files every commit after the first import changes */
  touch: number;
}

export interface HistoryFacts {
  commits: number;
  files: number;
  /** the tree's size at the tip, in bytes */
  treeBytes: number;
  /** the bare repository's pack(s) on disk, in bytes */
  packBytes: number;
  /** the paths every run may change (one per run, taken in turn) */
  paths: string[];
  buildS: number;
}

/** A small deterministic PRNG (mulberry32): the same spec gives the same repository. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "task run lease epoch queue claim worker branch review label retry effect outbox state".split(" ");

function line(rand: () => number, n: number): string {
  const w = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  const kind = rand();
  if (kind < 0.15) return `// ${w()} ${w()} ${w()} ${w()} ${w()}`;
  if (kind < 0.3) return "";
  return `export const ${w()}_${n} = ${JSON.stringify(`${w()}-${w()}`)}; // ${Math.floor(rand() * 1e6)}`;
}

function pathOf(i: number): string {
  const folder = Math.floor(i / 20);
  return i % 20 === 19 ? `docs/part-${folder}.md` : `src/m${String(folder).padStart(2, "0")}/file-${i % 20}.ts`;
}

/** Writes to a child's stdin, waiting for it to drain when its buffer is full. */
function writer(stdin: NodeJS.WritableStream): (text: string) => Promise<void> {
  return (text) =>
    stdin.write(text) ? Promise.resolve() : new Promise<void>((resolve) => stdin.once("drain", () => resolve()));
}

function runGit(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  feed?: (w: (t: string) => Promise<void>) => Promise<void>,
) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn("git", args, { cwd: dir, env: { ...env, GIT_DIR: dir }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`git ${args[0]} failed (exit ${code}): ${err.trim()}`)),
    );
    if (!feed) child.stdin.end();
    else
      feed(writer(child.stdin)).then(
        () => child.stdin.end(),
        (e: unknown) => {
          child.kill("SIGKILL");
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
  });
}

/**
 * Gives the fake's git-backed `repo` (just added, one initial commit) the
 * history `spec` asks for, on its default branch.
 */
export async function buildHistory(fake: FakeGitHub, repoName: string, spec: HistorySpec): Promise<HistoryFacts> {
  const started = Date.now();
  const repo = fake.state.repo(repoName);
  const git = repo.git;
  if (!git) throw new Error(`${repoName} is not git-backed`);
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"], HOME: git.dir, LANG: "C", GIT_CONFIG_NOSYSTEM: "1" };
  const ref = `refs/heads/${repo.defaultBranch}`;
  const root = (await runGit(git.dir, ["rev-parse", ref], env)).trim();

  const rand = prng(5000);
  let serial = 0;
  const files = Array.from({ length: spec.files }, () => {
    // sizes from a quarter of the mean to about three times it
    const bytes = spec.fileKb * 1024 * (0.25 + 2.75 * rand() * rand());
    const lines: string[] = [];
    for (let size = 0; size < bytes;) {
      const l = line(rand, serial++);
      lines.push(l);
      size += l.length + 1;
    }
    return lines;
  });
  const authors = ["alice", "bob", "carol", "dave", "erin"];
  const stepS = 3 * 3600;
  let when = Math.floor(Date.now() / 1000) - spec.commits * stepS - 86_400;

  await runGit(git.dir, ["fast-import", "--quiet", "--done"], env, async (write) => {
    const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    const commit = async (n: number, message: string, changed: number[]) => {
      const who = authors[n % authors.length]!;
      let text = `commit ${ref}\nmark :${n}\n`;
      text += `committer ${who} <${who}@example.com> ${(when += stepS)} +0000\n${data(message)}`;
      if (n === 1) text += `from ${root}\n`;
      for (const i of changed) text += `M 100644 inline ${pathOf(i)}\n${data(files[i]!.join("\n") + "\n")}`;
      await write(text);
    };
    await commit(
      1,
      "Import the project",
      files.map((_, i) => i),
    );
    for (let n = 2; n < spec.commits; n++) {
      const changed = new Set<number>();
      while (changed.size < Math.min(spec.touch, spec.files)) changed.add(Math.floor(rand() * spec.files));
      for (const i of changed) {
        const lines = files[i]!;
        const edits = 1 + Math.floor(rand() * 3);
        for (let e = 0; e < edits; e++) lines[Math.floor(rand() * lines.length)] = line(rand, serial++);
        if (rand() < 0.3) lines.splice(Math.floor(rand() * lines.length), 0, line(rand, serial++));
      }
      await commit(n, `Change ${[...changed].map(pathOf).join(", ")} (${n})`, [...changed]);
    }
    await write("done\n");
  });
  // How a host keeps a repository: one pack with bitmaps, so a clone does not count objects one by one, and its
  // deltas computed again (-f): fast-import stores each new version of a file as a delta against the one before,
  // so checking out the tip would resolve a chain of up to 50 deltas per file (it made `git worktree add` take
  // three times as long). A repack stores the newest versions whole, as every gc'd repository has them.
  await runGit(git.dir, ["repack", "-a", "-d", "-f", "-b", "--quiet"], env);
  syncFromGit(fake.state, repo, git);

  const count = Number((await runGit(git.dir, ["rev-list", "--count", ref], env)).trim());
  const sizes = await runGit(git.dir, ["count-objects", "-v"], env);
  const packKb = Number(/size-pack: (\d+)/.exec(sizes)?.[1] ?? 0);
  return {
    commits: count,
    files: spec.files,
    treeBytes: files.reduce((sum, lines) => sum + Buffer.byteLength(lines.join("\n") + "\n"), 0),
    packBytes: packKb * 1024,
    paths: files.map((_, i) => pathOf(i)).filter((p) => p.endsWith(".ts")),
    buildS: (Date.now() - started) / 1000,
  };
}
