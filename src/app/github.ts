/**
 * Orchestra's reach to GitHub, wired on Probot's server: the server itself,
 * the port for an installation, the App's own authentication and its bot
 * login. Nothing here decides anything.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { Probot, ProbotOctokit, Server } from "probot";
import type { Credentials, Env } from "../config/env.js";
import { appBotLogin, octokitGitHub } from "../github/octokit.js";
import type { GitHubFor } from "../github/port.js";
import type { Metrics } from "../metrics/registry.js";
import { stoppable } from "../github/stop.js";
import { appJwtSigner } from "../github/app-jwt.js";

/**
 * Probot's octokit without its throttling: writes are paced per installation
 * by the effects executor (Probot's limiter is shared by every installation
 * and can hold a request for an hour on a rate limit). Its retry plugin stays
 * for reads; writes opt out of it call by call.
 */
export const ProductionOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  throttle: { enabled: false },
}));

/**
 * Probot's own webhook middleware cannot be switched off; it is parked on a
 * path nobody posts to, with a random secret, so no request can reach the
 * handlers without going through the durable inbox.
 */
const PROBOT_INTERNAL_WEBHOOK_PATH = "/-/probot-internal-webhooks";

/**
 * The App client signs its JWT with `createJwt` (one signature reused for
 * its life) instead of the private key (a signature per request). Probot
 * needs the key itself, so it is swapped here, where Probot's options reach
 * the client.
 */
function signedOnce(Base: typeof ProbotOctokit, privateKey: string): typeof ProbotOctokit {
  const createJwt = appJwtSigner(privateKey);
  return Base.defaults((o: { auth?: Record<string, unknown> }) => {
    if (o.auth?.privateKey !== privateKey) return o;
    const { privateKey: _signedOnce, ...auth } = o.auth;
    return { ...o, auth: { ...auth, createJwt } };
  });
}

export interface GitHubAccess {
  server: Server;
  /** The port for one installation, counted and watched for its rate limit. */
  githubFor: GitHubFor;
  /** The App itself (its JWT): its login, its delivery log, its installations. */
  appAuth: () => Promise<InstanceType<typeof ProbotOctokit>>;
  botLogin: () => Promise<string>;
  /** The App's bot login once a call has read it; null before (nothing is asked for it). */
  knownBotLogin: () => string | null;
  isSelf: (actor: { login: string; type: string }) => Promise<boolean>;
  /** Called once by the server's loader with Probot's app. */
  bind(probot: Probot): void;
  /** Abandons every GitHub call in flight and refuses new ones: the service is stopping. */
  stopCalls(): void;
}

export function gitHubAccess(o: {
  env: Env & { credentials: Credentials };
  log: Logger;
  Octokit?: typeof ProbotOctokit;
  metrics: Metrics;
}): GitHubAccess {
  const { env, log, metrics } = o;
  const { credentials } = env;
  // Every GitHub call of this service (installations, the App, tokens) ends when the service stops.
  const stopping = new AbortController();
  const Octokit = signedOnce(o.Octokit ?? ProductionOctokit, credentials.privateKey).plugin(stoppable(stopping.signal));
  const ProbotWithDefaults = Probot.defaults({
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    secret: randomBytes(32).toString("hex"),
    baseUrl: env.baseUrl,
    log,
    Octokit,
  });
  const server = new Server({
    Probot: ProbotWithDefaults,
    port: env.port,
    host: env.host,
    log,
    webhookPath: PROBOT_INTERNAL_WEBHOOK_PATH,
  });

  let probot: Probot | undefined;
  const githubFor: GitHubFor = async (installationId) => {
    if (!probot) throw new Error("server not loaded");
    const octokit = await probot.auth(installationId);
    metrics.watchRateLimit(installationId, octokit);
    return metrics.countingPort(installationId, octokitGitHub(octokit));
  };
  const appAuth = async () => {
    if (!probot) throw new Error("server not loaded");
    return probot.auth();
  };
  let login: Promise<string> | undefined;
  let known: string | null = null;
  const botLogin = () => {
    login ??= appAuth()
      .then(appBotLogin)
      .then((l) => (known = l));
    login.catch(() => (login = undefined));
    return login;
  };
  const isSelf = async (actor: { login: string; type: string }) =>
    actor.type === "Bot" && actor.login.toLowerCase() === (await botLogin()).toLowerCase();
  return {
    server,
    githubFor,
    appAuth,
    botLogin,
    knownBotLogin: () => known,
    isSelf,
    bind(app) {
      probot = app;
    },
    stopCalls() {
      stopping.abort();
    },
  };
}
