/**
 * The fake's own identity and what hangs off it: ids and shas, users,
 * installations and their tokens, repositories and who may do what in them.
 */
import { createHash, randomBytes } from "node:crypto";
import { Dependencies } from "../dependencies.js";
import { createFork } from "../forks.js";
import type { GitOptions } from "../git/host.js";
import type { Description } from "../openapi.js";
import { HookDeliveries } from "../routes/hooks.js";
import type { FakeState } from "../state.js";
import { SubIssues } from "../sub-issues.js";
import { Repo } from "./repo.js";
import type { AccessToken, Dispatch, Installation, Rerun, Role, User } from "./types.js";

export interface AppIdentity {
  id: number;
  slug: string;
  name: string;
  owner: string;
  clientId: string;
}

const ACTIONS_APP = { id: 15368, slug: "github-actions", name: "GitHub Actions", owner: "github" };

/**
 * What the App asks for and an installation grants unless a test says
 * otherwise: exactly app.yml's default_permissions and default_events
 * (test/cli/doctor-compare.test.ts holds the two together).
 */
export const DEFAULT_PERMISSIONS: Readonly<Record<string, string>> = {
  metadata: "read",
  issues: "write",
  pull_requests: "write",
  contents: "write",
  checks: "write",
  actions: "write",
};

export const DEFAULT_EVENTS: readonly string[] = [
  "issues",
  "issue_comment",
  "sub_issues",
  "issue_dependencies",
  "pull_request",
  "pull_request_review",
  "check_run",
  "check_suite",
  "workflow_run",
  "workflow_job",
  "push",
];

export interface FakeHost {
  description: Description;
  installedVersion: string | null;
  dependencies: boolean;
}
export class FakeStateCore {
  readonly users = new Map<string, User>();
  readonly installations = new Map<number, Installation>();
  readonly tokens = new Map<string, AccessToken>();
  readonly repos = new Map<string, Repo>();
  /** every accepted workflow dispatch, in order */
  readonly dispatches: Dispatch[] = [];
  /** every accepted rerun / rerequest, in order */
  readonly reruns: Rerun[] = [];
  /** issue dependencies ("blocked by"), across repositories */
  readonly dependencies = new Dependencies(() => this.repos.values());
  /** the App's webhook deliveries, one item per attempt (routes/hooks.ts) */
  readonly hookDeliveries = new HookDeliveries(() => this.now());
  /** sub-issues (parent → children), across repositories */
  readonly subIssues = new SubIssues(() => this.repos.values());
  /** replace to freeze or move time */
  clock: () => Date = () => new Date();
  /** what the App itself asks for (`GET /app`); an installation keeps what it accepted, which may lag behind */
  /**
   * The host this fake plays (startFakeGitHub's `host`): which description it
   * answers from, the release GET /meta states (null on api.github.com and
   * GHEC), and whether it has issue dependencies (their route is in its
   * description; without them issues carry no `issue_dependencies_summary`).
   */
  host: FakeHost = { description: "api.github.com", installedVersion: null, dependencies: true };
  appPermissions: Record<string, string> = { ...DEFAULT_PERMISSIONS };
  appEvents: string[] = [...DEFAULT_EVENTS];
  private seq = 1_000_000;
  private shaSeq = 0;

  constructor(readonly app: AppIdentity) {
    this.user(this.botLogin, "Bot");
    this.user(`${ACTIONS_APP.slug}[bot]`, "Bot");
  }

  get botLogin(): string {
    return `${this.app.slug}[bot]`;
  }

  get actionsApp(): typeof ACTIONS_APP {
    return ACTIONS_APP;
  }

  now(): Date {
    return this.clock();
  }

  nextId(): number {
    return ++this.seq;
  }

  newSha(seed = ""): string {
    return createHash("sha1")
      .update(`${++this.shaSeq}:${seed}:${randomBytes(4).toString("hex")}`)
      .digest("hex");
  }

  // ---- users and installations -------------------------------------------

  /** Get or create a user; logins are case-insensitive as on GitHub. */
  user(login: string, type?: User["type"]): User {
    const key = login.toLowerCase();
    let u = this.users.get(key);
    if (!u) {
      const t = type ?? (login.endsWith("[bot]") ? "Bot" : "User");
      u = { login, id: this.nextId(), type: t };
      this.users.set(key, u);
    } else if (type && u.type !== type) {
      u.type = type;
    }
    return u;
  }

  addInstallation(
    id: number,
    account: string,
    opts: { accountType?: Installation["accountType"]; permissions?: Record<string, string>; events?: string[] } = {},
  ): Installation {
    const inst: Installation = {
      id,
      account,
      accountType: opts.accountType ?? "Organization",
      permissions: { ...DEFAULT_PERMISSIONS, ...opts.permissions },
      events: [...(opts.events ?? DEFAULT_EVENTS)],
      repositorySelection: "all",
      createdAt: this.now(),
      suspendedAt: null,
    };
    this.user(account, inst.accountType);
    this.installations.set(id, inst);
    return inst;
  }

  issueToken(installationId: number, ttlMs = 60 * 60 * 1000): AccessToken {
    const inst = this.installations.get(installationId);
    const token: AccessToken = {
      token: `ghs_${randomBytes(18).toString("base64url")}`,
      installationId,
      expiresAt: new Date(this.now().getTime() + ttlMs),
      validUntilMs: Date.now() + ttlMs,
      permissions: { ...(inst?.permissions ?? DEFAULT_PERMISSIONS) },
      repositories: null,
      revokedAt: null,
    };
    this.tokens.set(token.token, token);
    return token;
  }

  /** GitHub still accepts the token: issued, not expired (real clock, as Octokit caches it), not revoked. */
  tokenLive(token: string): boolean {
    const t = this.tokens.get(token);
    return Boolean(t && !t.revokedAt && t.validUntilMs > Date.now());
  }

  /** Make every issued installation token invalid (the App must fetch a new one). */
  expireTokens(): void {
    const past = new Date(this.now().getTime() - 1000);
    for (const t of this.tokens.values()) {
      t.expiresAt = past;
      t.validUntilMs = 0;
    }
  }

  // ---- repositories -------------------------------------------------------

  addRepo(
    this: FakeState,
    fullName: string,
    opts: {
      defaultBranch?: string;
      installationId?: number;
      private?: boolean;
      id?: number;
      /** back it by a real bare repository, cloneable and pushable over HTTP (see git/host.ts) */
      git?: boolean | GitOptions;
    } = {},
  ): Repo {
    const [owner, name] = splitRepo(fullName);
    let installationId = opts.installationId ?? null;
    if (installationId === null) {
      const mine = [...this.installations.values()].filter((i) => i.account.toLowerCase() === owner.toLowerCase());
      if (mine.length === 1) installationId = mine[0]!.id;
    } else if (!this.installations.has(installationId)) {
      this.addInstallation(installationId, owner);
    }
    const repo = new Repo(
      opts.id ?? this.nextId(),
      owner,
      name,
      opts.defaultBranch ?? "main",
      installationId,
      opts.private ?? true,
      this.now(),
    );
    this.user(owner);
    this.repos.set(fullName.toLowerCase(), repo);
    const root = this.commit(repo, [], "Initial commit", owner);
    repo.branches.set(repo.defaultBranch, root.sha);
    if (opts.git) this.git.enable(repo, opts.git === true ? {} : opts.git);
    return repo;
  }

  /**
   * Fork `sourceRepo` into `forkOwner/<name>`: a repository of its own
   * (`fork: true`, its own issue numbers) that starts with the source's
   * commits and branches. Pull requests from it are opened in the parent:
   * `addPull(parent, { head, headRepo: fork })`.
   */
  addFork(this: FakeState, sourceRepo: string, forkOwner: string): Repo {
    if (this.repo(sourceRepo).git) throw new Error(`fake GitHub: forks of a git-backed repository are not modelled`);
    return createFork(this, sourceRepo, forkOwner);
  }

  findRepo(fullName: string): Repo | undefined {
    return this.repos.get(fullName.toLowerCase());
  }

  repo(fullName: string): Repo {
    const r = this.findRepo(fullName);
    if (!r) throw new Error(`fake GitHub: no repository ${fullName} (addRepo it first)`);
    return r;
  }

  setPermission(repoName: string, username: string, role: Role): void {
    this.user(username);
    this.repo(repoName).permissions.set(username.toLowerCase(), role);
  }

  /**
   * The role GitHub would report. The owner of a user-owned repository is
   * admin; anyone else without a grant can read a public repository and has
   * no access to a private one.
   */
  roleOf(repo: Repo, username: string): Role {
    const explicit = repo.permissions.get(username.toLowerCase());
    if (explicit) return explicit;
    const owner = this.users.get(repo.owner.toLowerCase());
    if (owner?.type === "User" && owner.login.toLowerCase() === username.toLowerCase()) return "admin";
    return repo.isPrivate ? "none" : "read";
  }
}

export function splitRepo(fullName: string): [string, string] {
  const [owner, name, ...rest] = fullName.split("/");
  if (!owner || !name || rest.length) throw new Error(`fake GitHub: expected "owner/repo", got "${fullName}"`);
  return [owner, name];
}
