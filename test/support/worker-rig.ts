/**
 * The whole loop, as a team runs it: the App on a real database, the fake
 * GitHub serving the repository over real git and sending GitHub's webhooks
 * for what is pushed and opened through it, and the real `orchestra worker`
 * (the package's CLI, as a child process) running a scripted stand-in agent:
 * a shell script that edits, commits, or leaves a mess. Nothing calls a model.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeGitHub } from "../fake-github/index.js";
import { GitClient } from "../fake-github/git/client.js";
import { bin, childEnv } from "./cli.js";
import type { Provider } from "../../src/store/db.js";
import { autoWebhooks } from "./github-events.js";
import { INSTALLATION, REPO, startRig, type Rig, type WorkerClient } from "./lifecycle-rig.js";

/** A git identity and no user configuration: the worker's git must not read the machine's. */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Stand-in Agent",
  GIT_AUTHOR_EMAIL: "agent@example.invalid",
  GIT_COMMITTER_NAME: "Stand-in Agent",
  GIT_COMMITTER_EMAIL: "agent@example.invalid",
  GIT_TERMINAL_PROMPT: "0",
};

export interface WorkerRun {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<number>;
}

export interface LoopRig extends Rig {
  /** Where the worker keeps its mirrors and worktrees, and the agents' scripts live. */
  root: string;
  workdir: string;
  /** A git client of the fake's repositories, for looking at what was pushed. */
  git: GitClient;
  /** The registered worker the CLI runs as. */
  workerClient: WorkerClient;
  /** Writes a stand-in agent: a shell script run in the run's worktree. Answers the `--agent` command. */
  agent(name: string, script: string): string;
  /**
   * Starts `orchestra worker` with these options (the service URL, token and work directory are given; with
   * `service: false` neither URL nor token, as in an Actions job).
   */
  start(args: string[], env?: Record<string, string>, opts?: { service?: boolean }): WorkerRun;
  /** Runs `orchestra worker --once` to its end. */
  once(args: string[], env?: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The sha of a branch on the fake GitHub (real git), or null. */
  branchSha(branch: string): string | null;
  /** A file's text at a branch of the fake GitHub's repository (real git), or null. */
  fileAt(branch: string, path: string): string | null;
}

export async function startLoop(
  opts: {
    provider?: Provider;
    files?: Record<string, string>;
    /** The repository's .github/orchestra.yml, committed with the first files (git-backed files are git's). */
    config?: string;
    /** The App's executor: `start: false` leaves every effect pending until `startEffects()`. */
    effects?: { start?: boolean };
  } = {},
): Promise<LoopRig> {
  const fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, {
    installationId: INSTALLATION,
    git: {
      files: {
        ...(opts.files ?? { "README.md": "# app\n", "src/app.txt": "version 1\n" }),
        ...(opts.config ? { ".github/orchestra.yml": opts.config } : {}),
      },
    },
  });
  fake.state.setPermission(REPO, "alice", "write");
  fake.state.setPermission(REPO, "eve", "read");
  const rig = await startRig({
    fake,
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(opts.effects ? { effects: opts.effects } : {}),
  });
  fake.setWebhookTarget(rig.app.url + "/api/github/webhooks", rig.app.secret);
  autoWebhooks(fake);
  const root = mkdtempSync(join(tmpdir(), "orchestra-loop-"));
  const workdir = join(root, "work");
  const git = await GitClient.start(fake);
  const workerClient = await rig.worker("loop-worker");

  const running = new Set<ChildProcess>();
  const start = (args: string[], env: Record<string, string> = {}, o: { service?: boolean } = {}): WorkerRun => {
    const service = o.service ?? true;
    const proc = spawn(
      process.execPath,
      [
        bin,
        "worker",
        ...(service ? ["--url", rig.app.url] : []),
        "--workdir",
        workdir,
        "--grace-seconds",
        "1",
        "--poll-seconds",
        "0.2",
        ...args,
      ],
      {
        cwd: root,
        env: childEnv({
          ...(service ? { ORCHESTRA_WORKER_TOKEN: workerClient.token } : {}),
          HOME: root,
          ...GIT_ENV,
          ...env,
        }),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    running.add(proc);
    proc.on("exit", () => running.delete(proc));
    let out = "";
    let err = "";
    proc.stdout.on("data", (b: Buffer) => (out += b.toString()));
    proc.stderr.on("data", (b: Buffer) => (err += b.toString()));
    const done = new Promise<number>((resolve) =>
      proc.on("exit", (code, signal) => resolve(code ?? (signal === "SIGKILL" ? 137 : -1))),
    );
    return { proc, stdout: () => out, stderr: () => err, done };
  };

  return {
    ...rig,
    root,
    workdir,
    git,
    workerClient,
    agent(name, script) {
      const path = join(root, `${name}.sh`);
      writeFileSync(path, `#!/bin/sh\nset -e\n${script}\n`);
      chmodSync(path, 0o755);
      return `sh ${path}`;
    },
    start,
    async once(args, env) {
      const w = start(["--once", ...args], env);
      const code = await w.done;
      return { code, stdout: w.stdout(), stderr: w.stderr() };
    },
    branchSha(branch) {
      return fake.state.repo(REPO).branches.get(branch) ?? null;
    },
    fileAt(branch, path) {
      const repo = fake.state.repo(REPO);
      const sha = repo.branches.get(branch);
      return sha && repo.git ? (repo.git.files(sha).get(path) ?? null) : null;
    },
    async stop() {
      // A worker a failed test left running is stopped first: it would write into the directory removed below.
      await Promise.all(
        [...running].map((p) => new Promise<void>((resolve) => (p.once("exit", () => resolve()), p.kill("SIGKILL")))),
      );
      await rig.stop();
      await fake.close();
      await git.dispose();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
