/**
 * A git client for tests against git-backed fake repositories, run as a
 * worker would run it: the real `git`, no prompts, a HOME of its own, the
 * installation token as an `http.extraHeader` (or as URL userinfo).
 *
 *   const client = await GitClient.start(fake);
 *   const dir = await client.clone("acme/widgets", token);
 *   await client.commitFile(dir, "a.txt", "a\n", "Add a");
 *   await client.git(dir, ["push", "origin", "HEAD:topic"], token);
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { FakeGitHub } from "../index.js";

const run = promisify(execFile);

export class GitClient {
  private seq = 0;

  private constructor(
    readonly fake: FakeGitHub,
    /** the client's HOME; clones go under it */
    readonly home: string,
  ) {}

  static async start(fake: FakeGitHub): Promise<GitClient> {
    return new GitClient(fake, await mkdtemp(join(tmpdir(), "git-client-")));
  }

  /** `<fake>/<owner>/<repo>.git`, as the repository's clone_url; with a token, as `x-access-token` userinfo. */
  url(fullName: string, token?: string): string {
    const url = `${this.fake.url}/${fullName}.git`;
    return token ? url.replace("://", `://x-access-token:${token}@`) : url;
  }

  /** Runs git in `cwd`; with a token, it goes as an HTTP Basic extra header (as actions/checkout does). */
  async git(cwd: string, args: string[], token?: string): Promise<string> {
    const basic = token && Buffer.from(`x-access-token:${token}`).toString("base64");
    const auth = basic ? ["-c", `http.extraHeader=Authorization: Basic ${basic}`] : [];
    const { stdout } = await run("git", [...auth, ...args], {
      cwd,
      env: {
        PATH: process.env.PATH,
        HOME: this.home,
        GIT_TERMINAL_PROMPT: "0",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "Worker",
        GIT_AUTHOR_EMAIL: "worker@example.com",
        GIT_COMMITTER_NAME: "Worker",
        GIT_COMMITTER_EMAIL: "worker@example.com",
      },
    });
    return stdout.trim();
  }

  /** What git printed on stderr when it failed; throws when it succeeded. */
  async fails(cwd: string, args: string[], token?: string): Promise<string> {
    try {
      await this.git(cwd, args, token);
    } catch (e) {
      return String((e as { stderr?: string }).stderr);
    }
    throw new Error(`git ${args.join(" ")} succeeded`);
  }

  /** A fresh clone of `fullName` under HOME; answers its directory. */
  async clone(fullName: string, token?: string): Promise<string> {
    const dir = join(this.home, `clone-${++this.seq}`);
    await this.git(this.home, ["clone", "--quiet", this.url(fullName), dir], token);
    return dir;
  }

  /** Writes a file and commits it; answers the commit's sha. */
  async commitFile(dir: string, path: string, content: string, message: string): Promise<string> {
    await writeFile(join(dir, path), content);
    await this.git(dir, ["add", path]);
    await this.git(dir, ["commit", "--quiet", "-m", message]);
    return this.git(dir, ["rev-parse", "HEAD"]);
  }

  /** A REST call to the fake with an installation token. */
  async rest(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${this.fake.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `token ${token}`,
        accept: "application/vnd.github+json",
        "user-agent": "git-client-test",
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  async dispose(): Promise<void> {
    await rm(this.home, { recursive: true, force: true });
  }
}
