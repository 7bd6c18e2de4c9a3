/**
 * A stateful fake GitHub for end-to-end tests of the App. Point Probot at it
 * with `fake.env` (GHE_HOST/GHE_PROTOCOL + APP_ID/PRIVATE_KEY): REST is
 * served under `/api/v3`, GraphQL at `/api/graphql`.
 *
 *   const fake = await startFakeGitHub();
 *   fake.state.addInstallation(1, "acme");
 *   fake.state.addRepo("acme/widgets", { installationId: 1 });
 *   ...drive the App...
 *   fake.assertNoViolations();
 *   await fake.close();
 */
import { takeAppKeys } from "./auth.js";
import type { Push } from "./git/host.js";
import { pushPayload } from "./git/payload.js";
import type { GraphQLRegistry } from "./graphql/index.js";
import type { Serializer } from "./json.js";
import { loadOpenApi, type Description } from "./openapi.js";
import {
  FakeServer,
  type ChaosOptions,
  type ChaosStats,
  type InjectRule,
  type OutageOptions,
  type RecordedRequest,
} from "./server.js";
import { FakeState } from "./state.js";

export type { ChaosOptions, ChaosStats, InjectRule, OutageOptions, RecordedRequest } from "./server.js";
export type { Description } from "./openapi.js";
export type {
  AccessToken,
  AppIdentity,
  CheckConclusion,
  CheckRun,
  CheckStatus,
  CheckSuite,
  Comment,
  Commit,
  Dispatch,
  Installation,
  Issue,
  Job,
  Label,
  Mergeable,
  MergeStateStatus,
  Pull,
  Reaction,
  Rerun,
  Review,
  Role,
  User,
  Workflow,
  WorkflowInput,
  WorkflowRun,
} from "./state.js";
export { FakeState, Repo } from "./state.js";
export type { HookDelivery, NewHookDelivery } from "./routes/hooks.js";
export type { GitOptions, Push, PushedCommit } from "./git/host.js";
export type { DependencySummary, IssueAt } from "./dependencies.js";
export { GraphQLFieldError, connection, type GraphQLHandler, type GraphQLContext } from "./graphql/index.js";

export interface StartOptions {
  /** listen port; 0 (default) picks a free one */
  port?: number;
  /** the fake App's id (default: a fresh number per fake) */
  appId?: number;
  /** the App's slug; its bot user is `<slug>[bot]` */
  appSlug?: string;
  /**
   * The host to play (default api.github.com): requests are checked against
   * its description and a route it lacks (newer, on api.github.com) is
   * answered 404 and listed in `hostGaps`. A GitHub Enterprise Server says its
   * release in GET /meta (`installedVersion`, default `<release>.0`); one
   * without issue dependencies serves issues without their summary.
   */
  host?: Description;
  installedVersion?: string;
}

export interface FakeGitHub {
  /** "http://127.0.0.1:PORT" */
  url: string;
  /** "127.0.0.1:PORT" (for GHE_HOST) */
  host: string;
  /** REST base URL for Octokit: `${url}/api/v3` */
  apiUrl: string;
  appId: number;
  /** PKCS#1 PEM; the fake verifies JWTs against its public half */
  privateKey: string;
  /** environment for a Probot process aimed at this fake */
  env: Record<"APP_ID" | "PRIVATE_KEY" | "GHE_HOST" | "GHE_PROTOCOL", string>;
  state: FakeState;
  /** every request in arrival order */
  requests: RecordedRequest[];
  /** human-readable: schema violations, unexpected routes, misuse */
  violations: string[];
  /** requests for routes the played host lacks (see StartOptions.host), answered 404 */
  hostGaps: RecordedRequest[];
  /** REST shapes of state objects, e.g. to build webhook payloads that agree with the API */
  json: Serializer;
  graphql: GraphQLRegistry;
  /**
   * answer the next N matching requests with this status instead of the real
   * handler (with `perform: true`, after running the real handler)
   */
  inject(rule: InjectRule): void;
  /**
   * Seeded random faults for writes (REST POST, PATCH, PUT, DELETE, and
   * GraphQL mutations): 502s, some performed before answering, and secondary
   * rate limits (403 + retry-after). Never GETs, GraphQL queries or token
   * minting; `inject` rules come
   * first. `null` switches it off. Each call with options restarts the PRNG
   * and the counters.
   */
  chaos(opts: ChaosOptions | null): void;
  /**
   * GitHub is down: every request, token minting and GraphQL included,
   * answers `status` (e.g. 502) until `outage(null)`.
   */
  outage(opts: OutageOptions | null): void;
  /** counters of the latest chaos run */
  chaosStats(): ChaosStats;
  /** Where webhook deliveries (sent and redelivered, see routes/hooks.ts) go, signed with `secret`. */
  setWebhookTarget(url: string, secret: string): void;
  /** The body of GitHub's `push` webhook for a push to a git-backed repository (`state.git.pushes`). */
  pushPayload(push: Push): Record<string, unknown>;
  /**
   * Deliver the `push` webhook for every push to a git-backed repository, to
   * the webhook target (setWebhookTarget), as GitHub does; the delivery is
   * answered before `git push` returns. `false` stops it.
   */
  deliverPushes(on?: boolean): void;
  /** Runs after each request's answer is decided, before it is sent (see FakeServer.afterHandle). */
  afterHandle(hook: ((rec: RecordedRequest, reply: { status: number; body?: unknown }) => Promise<void>) | null): void;
  /** Runs just before each REST request's handler (see FakeServer.beforeHandle). */
  beforeHandle(hook: ((operationId: string, rec: RecordedRequest) => void) | null): void;
  /**
   * Requests for one operation wait, unanswered, until `release()`:
   * `reached` resolves with the first one. Lets a test keep a request of the
   * App's in flight while it does something else.
   */
  hold(operationId: string): { reached: Promise<RecordedRequest>; release(): void };
  /** requests for one operation (`issues/add-labels`, `graphql:PullRequestMergeState`) */
  requestsFor(operationId: string): RecordedRequest[];
  /** throws listing every violation, if any */
  assertNoViolations(): void;
  close(): Promise<void>;
}

let nextAppId = 900_001;

export async function startFakeGitHub(opts: StartOptions = {}): Promise<FakeGitHub> {
  const description = opts.host ?? "api.github.com";
  const openapi = loadOpenApi(description);
  const dotcom = description === "api.github.com" ? undefined : loadOpenApi();
  const keys = await takeAppKeys();
  const appId = opts.appId ?? nextAppId++;
  const slug = opts.appSlug ?? "orchestra-test";
  const state = new FakeState({
    id: appId,
    slug,
    name: "Orchestra (test)",
    owner: "orchestra-dev",
    clientId: `Iv1.fake${appId}`,
  });
  const release = /^ghes-(.+)$/.exec(description)?.[1];
  state.host = {
    description,
    installedVersion: release ? (opts.installedVersion ?? `${release}.0`) : null,
    dependencies:
      openapi.byRoute("GET", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by") !== undefined,
  };
  const server = new FakeServer({
    state,
    openapi,
    ...(dotcom ? { dotcom } : {}),
    publicKey: keys.publicKey,
    port: opts.port,
  });
  await server.listen();
  const url = server.urls.web;
  const host = url.replace(/^http:\/\//, "");
  return {
    url,
    host,
    apiUrl: server.urls.api,
    appId,
    privateKey: keys.privateKey,
    env: { APP_ID: String(appId), PRIVATE_KEY: keys.privateKey, GHE_HOST: host, GHE_PROTOCOL: "http" },
    state,
    requests: server.requests,
    violations: server.violations,
    hostGaps: server.hostGaps,
    json: server.json,
    graphql: server.graphql,
    inject: (rule) => server.inject(rule),
    chaos: (opts) => server.chaos(opts),
    outage: (opts) => server.outage(opts),
    chaosStats: () => server.chaosStats(),
    setWebhookTarget: (target, secret) => {
      state.hookDeliveries.target = { url: target, secret };
    },
    pushPayload: (push) => pushPayload(state, server.json, push),
    deliverPushes: (on = true) => {
      state.git.onPush = on
        ? async (push) => {
            if (!state.hookDeliveries.target) {
              server.violations.push(`push to ${push.repo} ${push.ref}: no webhook target (fake.setWebhookTarget)`);
              return;
            }
            await state.hookDeliveries.send("push", pushPayload(state, server.json, push));
          }
        : null;
    },
    beforeHandle: (hook) => {
      server.beforeHandle = hook;
    },
    afterHandle: (hook) => {
      server.afterHandle = hook;
    },
    hold: (operationId) => server.hold(operationId),
    requestsFor: (operationId) => server.requests.filter((r) => r.operationId === operationId),
    assertNoViolations() {
      if (server.violations.length) {
        throw new Error(
          `fake GitHub recorded ${server.violations.length} violation(s):\n` +
            server.violations.map((v) => `  - ${v}`).join("\n"),
        );
      }
    },
    close: async () => {
      await server.close();
      state.git.dispose();
    },
  };
}
