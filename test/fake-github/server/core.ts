/**
 * What every part of the server shares: the routes this host serves, what it
 * records (requests, violations, the routes the host lacks), the checks and
 * faults a request goes through, and the hooks and holds a test sets around
 * a request.
 */
import type { KeyObject } from "node:crypto";
import { Checks } from "../checks.js";
import { Faults } from "../faults.js";
import { GraphQLRegistry } from "../graphql/index.js";
import type { RecordedRequest, Reply, RouteTable } from "../http.js";
import type { Serializer, Urls } from "../json.js";
import type { OpenApiIndex } from "../openapi.js";
import { actionRoutes } from "../routes/actions.js";
import { appRoutes } from "../routes/apps.js";
import { checkRoutes } from "../routes/checks.js";
import { dependencyRoutes } from "../routes/dependencies.js";
import { gitRoutes } from "../routes/git.js";
import { hookRoutes } from "../routes/hooks.js";
import { issueRoutes } from "../routes/issues.js";
import { metaRoutes } from "../routes/meta.js";
import { pullRoutes } from "../routes/pulls.js";
import { repoRoutes } from "../routes/repos.js";
import type { ChaosOptions, ChaosStats, InjectRule, OutageOptions } from "../faults.js";
import type { FakeState } from "../state.js";

const ROUTES: RouteTable = {
  ...appRoutes,
  ...hookRoutes,
  ...issueRoutes,
  ...dependencyRoutes,
  ...pullRoutes,
  ...gitRoutes,
  ...checkRoutes,
  ...actionRoutes,
  ...repoRoutes,
  ...metaRoutes,
};

export interface FakeServerOptions {
  state: FakeState;
  /** The description of the host this fake plays: what it serves. */
  openapi: OpenApiIndex;
  /**
   * api.github.com's description, when the fake plays another host: a route
   * there and not on this host is one the host lacks (GitHub's 404, recorded
   * in `hostGaps`), not a mistake of the App's.
   */
  dotcom?: OpenApiIndex;
  publicKey: KeyObject;
  port?: number;
}

export class ServerCore {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  /** Requests for routes api.github.com has and the host this fake plays lacks, answered 404 as that host does. */
  readonly hostGaps: RecordedRequest[] = [];
  /** The routes this host serves: the fake's, less those its description lacks. */
  protected readonly routes: RouteTable = {};
  readonly graphql = new GraphQLRegistry();
  readonly state: FakeState;
  json!: Serializer;
  urls!: Urls;
  protected readonly openapi: OpenApiIndex;
  protected readonly checks: Checks;
  protected readonly faults = new Faults();

  constructor(protected readonly opts: FakeServerOptions) {
    this.state = opts.state;
    this.openapi = opts.openapi;
    this.checks = new Checks({
      state: opts.state,
      openapi: opts.openapi,
      publicKey: opts.publicKey,
      violations: this.violations,
    });
    for (const [key, handler] of Object.entries(ROUTES)) {
      const [method, path] = key.split(" ") as [string, string];
      if (this.openapi.byRoute(method, path)) this.routes[key] = handler;
      else if (!opts.dotcom)
        throw new Error(`fake GitHub: route ${key} is not an operation in GitHub's REST description`);
    }
  }

  /** see FakeGitHub.inject and Faults */
  inject(rule: InjectRule): void {
    this.faults.inject(rule);
  }

  /** see Faults.outage */
  outage(opts: OutageOptions | null): void {
    this.faults.outage(opts);
  }

  /** see ChaosOptions and Faults.chaos */
  chaos(opts: ChaosOptions | null): void {
    this.faults.chaos(opts);
  }

  /** counters of the latest chaos run (a copy) */
  chaosStats(): ChaosStats {
    return this.faults.chaosStats();
  }

  /**
   * Called for each REST request just before its handler runs, with the
   * operationId: lets a test change GitHub's state at an exact moment (a
   * check turning red between two reads of it).
   */
  beforeHandle: ((operationId: string, rec: RecordedRequest) => void) | null = null;

  /**
   * Runs after a request's answer is decided and before it is sent: GitHub's
   * own webhooks for what the request did go out from here (see
   * test/support/github-events.ts), so they are on their way before the
   * caller has its answer, as they often are on GitHub.
   */
  afterHandle: ((rec: RecordedRequest, reply: Reply) => Promise<void>) | null = null;

  protected readonly holds = new Map<string, { gate: Promise<void>; reached: (rec: RecordedRequest) => void }>();

  /** see FakeGitHub.hold */
  hold(operationId: string): { reached: Promise<RecordedRequest>; release(): void } {
    let release!: () => void;
    let reached!: (rec: RecordedRequest) => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = new Promise<RecordedRequest>((r) => (reached = r));
    this.holds.set(operationId, { gate, reached });
    return {
      reached: first,
      release: () => {
        this.holds.delete(operationId);
        release();
      },
    };
  }
}
