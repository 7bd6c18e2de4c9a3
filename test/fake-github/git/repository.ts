/**
 * One git-backed fake repository: a real bare repository on disk, and the few
 * plumbing commands the fake needs to write to it (commits made through the
 * API, ref updates, merges) and to read it back (refs, commits, files). Each
 * command is synchronous so that state methods stay synchronous for the many
 * callers that use them; a command in a tiny repository takes milliseconds.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";

/** A commit as git stores it, in the words the fake's model uses. */
export interface GitCommit {
  sha: string;
  parents: string[];
  tree: string;
  /** the login GitHub would show: from a `<id>+<login>@users.noreply.github.com` address, else the name */
  author: string;
  /** the author's name and address as git has them */
  name: string;
  email: string;
  date: Date;
  message: string;
}

export interface Identity {
  login: string;
  id: number;
}

export class GitConflict extends Error {
  constructor(readonly files: string[]) {
    super(`merge conflict in ${files.join(", ") || "(unknown files)"}`);
  }
}

/** What the server-side git runs with: no user or system configuration leaks into the fake. */
export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
  };
}

const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

export class GitRepo {
  /** what git's refs were when the fake last read or wrote them: `refs/heads/main` → sha */
  readonly refs = new Map<string, string>();
  private readonly mergeable = new Map<string, string[] | null>();

  constructor(
    /** the bare repository's directory */
    readonly dir: string,
    private readonly home: string,
    private readonly now: () => Date,
  ) {}

  /** `git init --bare` with the settings a hosted repository has. */
  static init(dir: string, home: string, now: () => Date, defaultBranch: string): GitRepo {
    execFileSync("git", ["init", "--quiet", "--bare", `--initial-branch=${defaultBranch}`, dir], {
      env: gitEnv(home),
    });
    const repo = new GitRepo(dir, home, now);
    // pushes over HTTP without REMOTE_USER checks in http-backend; the fake authenticates itself
    repo.git(["config", "http.receivepack", "true"]);
    // never collect objects: a pull request's frozen head must stay readable, as on GitHub
    repo.git(["config", "gc.auto", "0"]);
    repo.git(["config", "receive.autogc", "false"]);
    repo.git(["config", "uploadpack.allowAnySHA1InWant", "true"]);
    // refs/pull/* are GitHub's to write: fetchable, never pushable
    repo.git(["config", "receive.hideRefs", "refs/pull"]);
    return repo;
  }

  git(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): string {
    return execFileSync("git", args, {
      cwd: this.dir,
      env: { ...gitEnv(this.home), GIT_DIR: this.dir, ...opts.env },
      input: opts.input,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      stdio: ["pipe", "pipe", "pipe"],
    });
  }

  /** A tree holding `files` (path → content), written to the object store. */
  writeTree(files: Record<string, string>): string {
    const entries = Object.entries(files);
    if (!entries.length) return EMPTY_TREE;
    const scratch = mkdtempSync(join(this.home, "index-"));
    try {
      const env = { GIT_INDEX_FILE: join(scratch, "index") };
      const lines = entries.map(([path, content]) => {
        const blob = this.git(["hash-object", "-w", "--stdin"], { input: content }).trim();
        return `100644 ${blob}\t${path.replace(/^\/+/, "")}\n`;
      });
      this.git(["update-index", "--add", "--index-info"], { input: lines.join(""), env });
      return this.git(["write-tree"], { env }).trim();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  /** A commit of `tree` (default: the first parent's tree, or an empty one) by `by`, dated on the fake's clock. */
  commitTree(parents: string[], message: string, by: Identity, tree?: string): string {
    const t = tree ?? (parents[0] ? this.git(["rev-parse", `${parents[0]}^{tree}`]).trim() : EMPTY_TREE);
    const when = `${Math.floor(this.now().getTime() / 1000)} +0000`;
    const email = `${by.id}+${by.login}@users.noreply.github.com`;
    const env = {
      GIT_AUTHOR_NAME: by.login,
      GIT_AUTHOR_EMAIL: email,
      GIT_AUTHOR_DATE: when,
      GIT_COMMITTER_NAME: by.login,
      GIT_COMMITTER_EMAIL: email,
      GIT_COMMITTER_DATE: when,
    };
    const args = ["commit-tree", t, ...parents.flatMap((p) => ["-p", p])];
    return this.git([...args, "-F", "-"], { input: message, env }).trim();
  }

  /** Point `ref` at `sha` (null deletes it); nothing runs when git already says so. */
  setRef(ref: string, sha: string | null): void {
    if ((this.refs.get(ref) ?? null) === sha) return;
    if (sha === null) this.git(["update-ref", "-d", ref]);
    else this.git(["update-ref", ref, sha]);
    if (sha === null) this.refs.delete(ref);
    else this.refs.set(ref, sha);
  }

  /** Every branch and tag as git has it now (annotated tags peeled to their commit). */
  readRefs(): Map<string, string> {
    const out = new Map<string, string>();
    const text = this.git([
      "for-each-ref",
      "--format=%(refname) %(objectname) %(*objectname)",
      "refs/heads",
      "refs/tags",
    ]);
    for (const line of text.split("\n")) {
      const [ref, sha, peeled] = line.split(" ");
      if (ref && sha) out.set(ref, peeled || sha);
    }
    return out;
  }

  /** Commits reachable from `tips` and not from `known`, parents before children. */
  readCommits(tips: string[], known: string[]): GitCommit[] {
    if (!tips.length) return [];
    const format = "%H%x1f%P%x1f%T%x1f%an%x1f%ae%x1f%ct%x1f%B%x1e";
    const input = [...tips, ...known.map((k) => `^${k}`)].join("\n") + "\n";
    const text = this.git(["log", "--topo-order", "--reverse", `--format=${format}`, "--stdin"], { input });
    return text
      .split("\x1e")
      .map((rec) => rec.replace(/^\n/, ""))
      .filter((rec) => rec.length)
      .map((rec) => {
        const [sha, parents, tree, name, email, time, message] = rec.split("\x1f");
        const noreply = /^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$/.exec(email ?? "");
        return {
          sha: sha!,
          parents: parents ? parents.split(" ") : [],
          tree: tree!,
          author: noreply?.[1] ?? name!,
          name: name!,
          email: email!,
          date: new Date(Number(time) * 1000),
          message: (message ?? "").replace(/\n+$/, ""),
        };
      });
  }

  /** The files of a commit: path → content (text as UTF-8). */
  files(sha: string): Map<string, string> {
    const out = new Map<string, string>();
    const listing = this.git(["ls-tree", "-r", "-z", sha]);
    const blobs: [string, string][] = [];
    for (const entry of listing.split("\0")) {
      const m = /^\d+ blob ([0-9a-f]{40})\t(.+)$/s.exec(entry);
      if (m) blobs.push([m[1]!, m[2]!]);
    }
    if (!blobs.length) return out;
    const raw = execFileSync("git", ["cat-file", "--batch"], {
      cwd: this.dir,
      env: { ...gitEnv(this.home), GIT_DIR: this.dir },
      input: blobs.map(([b]) => b).join("\n") + "\n",
      maxBuffer: 64 * 1024 * 1024,
    });
    let at = 0;
    for (const [, path] of blobs) {
      const nl = raw.indexOf(0x0a, at);
      const size = Number(raw.subarray(at, nl).toString("latin1").split(" ")[2]);
      out.set(path, raw.subarray(nl + 1, nl + 1 + size).toString("utf8"));
      at = nl + 1 + size + 1;
    }
    return out;
  }

  /** Paths a commit added, changed and removed against its first parent (a push payload's commit lists). */
  changes(sha: string): { added: string[]; removed: string[]; modified: string[] } {
    const out = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
    const text = this.git(["diff-tree", "-r", "-z", "--no-commit-id", "--name-status", "--root", sha]);
    const parts = text.split("\0").filter((p) => p.length);
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const [status, path] = [parts[i]!, parts[i + 1]!];
      if (status.startsWith("A")) out.added.push(path);
      else if (status.startsWith("D")) out.removed.push(path);
      else out.modified.push(path);
    }
    return out;
  }

  /** The tree a merge of `theirs` into `ours` gives, or the conflicting paths. */
  mergeTree(ours: string, theirs: string): { tree: string } | { conflicts: string[] } {
    try {
      return { tree: this.git(["merge-tree", "--write-tree", "--name-only", "-z", ours, theirs]).split("\0")[0]! };
    } catch (e) {
      const err = e as { status?: number; stdout?: string };
      if (err.status !== 1 || typeof err.stdout !== "string") throw e;
      // output: the tree, then the conflicted paths, then an empty field and the messages
      const fields = err.stdout.split("\0");
      const end = fields.indexOf("", 1);
      return { conflicts: fields.slice(1, end < 0 ? undefined : end) };
    }
  }

  /** Whether `head` merges cleanly into `base` (cached: commits never change). */
  conflictsBetween(base: string, head: string): string[] | null {
    const key = `${base}:${head}`;
    if (!this.mergeable.has(key)) {
      const result = this.mergeTree(base, head);
      this.mergeable.set(key, "conflicts" in result ? result.conflicts : null);
    }
    return this.mergeable.get(key)!;
  }

  /**
   * The commit a pull request's merge puts on its base, as GitHub makes it:
   * a merge commit of base and head, one squashed commit, or head's commits
   * replayed onto base. Throws GitConflict when they do not merge cleanly.
   */
  mergeCommit(
    method: "merge" | "squash" | "rebase",
    base: string,
    head: string,
    message: string,
    by: Identity,
  ): string {
    if (method === "rebase") return this.rebase(base, head, by);
    const result = this.mergeTree(base, head);
    if ("conflicts" in result) throw new GitConflict(result.conflicts);
    return this.commitTree(method === "merge" ? [base, head] : [base], message, by, result.tree);
  }

  /** Cherry-picks head's commits (not base's) onto base in a scratch worktree; answers the last one. */
  private rebase(base: string, head: string, by: Identity): string {
    const picks = this.git(["rev-list", "--reverse", "--topo-order", "--no-merges", head, `^${base}`])
      .split("\n")
      .filter(Boolean);
    const scratch = mkdtempSync(join(this.home, "rebase-"));
    const work = join(scratch, "tree");
    try {
      this.git(["worktree", "add", "--quiet", "--detach", work, base]);
      const email = `${by.id}+${by.login}@users.noreply.github.com`;
      const env = gitEnv(this.home);
      const identity = ["-c", `user.name=${by.login}`, "-c", `user.email=${email}`];
      for (const sha of picks) {
        try {
          execFileSync("git", [...identity, "cherry-pick", "--allow-empty", "--keep-redundant-commits", sha], {
            cwd: work,
            env,
            stdio: "pipe",
          });
        } catch {
          throw new GitConflict([]);
        }
      }
      return execFileSync("git", ["rev-parse", "HEAD"], { cwd: work, env }).toString().trim();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
      this.git(["worktree", "prune"]);
    }
  }
}
