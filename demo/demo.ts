/**
 * `npm run demo`: Orchestra doing its job on one machine, with nothing to
 * register and nothing leaving it. The service is the production entry
 * (service.ts) on SQLite in a temporary directory; GitHub is the project's
 * stateful fake (github.ts), serving real git and sending GitHub's signed
 * webhooks; the worker is the package's `orchestra worker`, running a shell
 * script as its agent (story-text.ts). The story (story.ts) prints each step.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HTTP_BACKEND } from "../test/fake-github/git/backend.js";
import { LINK_MAX_MS, signInLink } from "../src/dashboard/session.js";
import { packageRoot } from "../src/paths.js";
import { Child } from "./children.js";
import { startGitHub } from "./github.js";
import { startService } from "./service.js";
import { AGENT, REPO } from "./story-text.js";
import { Story, watchService } from "./story.js";

export const WORKER_NAME = "demo-worker";
/** How long the worker and the service get to stop on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** A git identity and no user configuration: the worker's git must not read the machine's. */
export const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Stand-in Agent",
  GIT_AUTHOR_EMAIL: "agent@example.invalid",
  GIT_COMMITTER_NAME: "Stand-in Agent",
  GIT_COMMITTER_EMAIL: "agent@example.invalid",
  GIT_TERMINAL_PROMPT: "0",
};

export interface Demo {
  /** The temporary directory holding the database, the worker's mirrors and worktrees; removed by stop(). */
  root: string;
  serviceUrl: string;
  adminToken: string;
  /** Opens the dashboard signed in (once). */
  signInUrl: string;
  /** Queues the issues and starts the worker: the story begins. */
  begin(): Promise<void>;
  /** Resolves once every step has happened and nothing is left to do. */
  told: Promise<void>;
  /** Rejects when a part stops by itself (the service or the worker exits, the simulation fails). */
  broken: Promise<never>;
  /**
   * What the simulated GitHub refused to take for GitHub's behaviour (a request outside GitHub's OpenAPI
   * description, an unexpected route): none, or the demo is wrong somewhere.
   */
  violations(): string[];
  /** Stops the worker, then the service, then the simulated GitHub, and removes `root`. */
  stop(): Promise<void>;
  /** At once, without waiting for anything: SIGKILL to every process it started, and `root` removed. */
  abandon(): void;
}

/** What the demo needs from the machine, or why it cannot run. */
function preflight(root: string): void {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("git is not installed: the simulated GitHub serves real git (Debian: apt-get install git)");
  }
  if (!existsSync(HTTP_BACKEND))
    throw new Error(`git's http-backend is not at ${HTTP_BACKEND}: the simulated GitHub runs it to serve git`);
  if (!existsSync(join(root, "dist", "src", "main.js")))
    throw new Error("the build is missing (dist/): run `npm run build` first, or start with `npm run demo`");
}

export async function startDemo(o: { print: (line: string) => void; port?: number }): Promise<Demo> {
  const pkg = packageRoot();
  preflight(pkg);
  const root = mkdtempSync(join(tmpdir(), "orchestra-demo-"));
  const home = join(root, "home");
  mkdirSync(home);
  const baseEnv = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: home,
    ...(process.env["TZ"] ? { TZ: process.env["TZ"] } : {}),
  };
  const story = new Story(o.print);
  let stopping = false;
  let fail!: (err: Error) => void;
  const broken = new Promise<never>((_, reject) => (fail = reject));
  broken.catch(() => {});
  const children: Child[] = [];
  const watchChild = (child: Child) => {
    children.push(child);
    void child.exited.then((exit) => {
      if (stopping) return;
      const how = exit.code === null ? exit.signal : `code ${exit.code}`;
      fail(new Error(`the ${child.name} stopped by itself (${how}); its last lines:\n${child.tail()}`));
    });
  };

  let github;
  let service;
  try {
    github = await startGitHub(story.say);
    service = await startService({
      root,
      packageRoot: pkg,
      github: {
        host: github.fake.host,
        url: github.fake.url,
        appId: github.fake.appId,
        privateKey: github.fake.privateKey,
      },
      baseEnv,
      ...(o.port === undefined ? {} : { port: o.port }),
    });
  } catch (err) {
    await github?.close();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const { fake, ci } = github;
  ci.onError = (err) => fail(err instanceof Error ? err : new Error(String(err)));
  watchChild(service.child);
  github.connect(`${service.url}/api/github/webhooks`, service.webhookSecret);
  const watcher = watchService(service, story, () => !ci.busy);

  let stopped = false;
  const abandon = () => {
    if (stopped) return;
    stopped = stopping = true;
    for (const child of children) child.kill("SIGKILL");
    fake.state.git.dispose();
    rmSync(root, { recursive: true, force: true });
  };
  // Whatever way the demo's process ends (but SIGKILL), it leaves nothing behind.
  process.once("exit", abandon);
  const stop = async () => {
    stopping = true;
    await watcher.stop();
    // The worker first: a run it stops is handed off to the service, which must still be there.
    for (const child of [...children].reverse()) await child.stop(STOP_GRACE_MS);
    await github.close();
    rmSync(root, { recursive: true, force: true });
    stopped = true;
    process.removeListener("exit", abandon);
  };

  return {
    root,
    serviceUrl: service.url,
    adminToken: service.adminToken,
    signInUrl: `${service.url}/dashboard/sign-in/link?code=${signInLink(service.adminToken, new Date(), LINK_MAX_MS).code}`,
    told: watcher.told,
    broken,
    violations: () => [...fake.violations],
    async begin() {
      const res = await fetch(`${service.url}/api/v1/workers`, {
        method: "POST",
        headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: WORKER_NAME, repos: [REPO] }),
      });
      if (res.status !== 201) throw new Error(`registering the worker answered ${res.status}: ${await res.text()}`);
      const { token } = (await res.json()) as { token: string };
      const agent = join(root, "agent.sh");
      writeFileSync(agent, AGENT, { mode: 0o755 });
      mkdirSync(join(root, "agent-memory"));
      await github.queueIssues();
      const args = ["worker", "--url", service.url, "--workdir", join(root, "worker")];
      const command = `sh '${agent}' '${join(root, "agent-memory")}'`;
      args.push("--agent", command, "--poll-seconds", "1", "--grace-seconds", "2");
      watchChild(
        new Child("worker", process.execPath, [join(pkg, "bin", "orchestra.js"), ...args], {
          cwd: root,
          env: { ...baseEnv, ...GIT_ENV, ORCHESTRA_WORKER_TOKEN: token },
        }),
      );
    },
    stop,
    abandon,
  };
}
