/**
 * Run tokens on Probot's octokit: minted as the App (its JWT), revoked as
 * the token itself. Both routes are in GitHub's REST description for
 * api.github.com, GitHub Enterprise Cloud and GitHub Enterprise Server 3.17
 * and later (`apps/create-installation-access-token`,
 * `apps/revoke-installation-access-token`).
 */
import type { ProbotOctokit } from "probot";
import { call } from "./errors.js";
import { GitHubError, RUN_TOKEN_PERMISSIONS, type GitHub, type InstallationTokens, type RunToken } from "./port.js";
import type { CallOptions } from "./octokit-issues.js";

type Octokit = InstanceType<typeof ProbotOctokit>;

/** The port's revokeToken, on a client of the same class and host that authenticates as the token. */
export function tokenMethods(octokit: Octokit, write: () => CallOptions): Pick<GitHub, "revokeToken"> {
  return {
    async revokeToken(token) {
      // The installation's own client would send the installation's token (its auth hook sets it on every request).
      const Client = octokit.constructor as new (o: Record<string, unknown>) => Octokit;
      const asToken = new Client({ auth: { token }, baseUrl: octokit.request.endpoint.DEFAULTS.baseUrl });
      try {
        await call("revoke installation token", () => asToken.rest.apps.revokeInstallationAccessToken({ ...write() }));
        return "revoked";
      } catch (e) {
        // GitHub no longer accepts it: it expired or was revoked already.
        if (e instanceof GitHubError && (e.status === 401 || e.status === 404)) return "unknown";
        throw e;
      }
    },
  };
}

interface RawToken {
  token: string;
  expires_at: string;
  permissions?: Record<string, string | undefined>;
  repositories?: Array<{ full_name: string }>;
}

/** `app` gives the App-level (JWT) octokit: Probot's `auth()` without an installation. */
export function octokitInstallationTokens(app: () => Promise<Octokit>, timeoutMs = 30_000): InstallationTokens {
  return {
    async mint(installationId, r): Promise<RunToken> {
      const octokit = await app();
      // Not retried: a retry after a lost answer would leave a token nobody holds, live for an hour.
      const { data } = await call("mint run token", () =>
        octokit.rest.apps.createInstallationAccessToken({
          installation_id: installationId,
          repositories: [r.repo],
          permissions: { ...RUN_TOKEN_PERMISSIONS },
          request: { retries: 0, signal: AbortSignal.timeout(timeoutMs) },
        }),
      );
      const raw = data as unknown as RawToken;
      const want = `${r.owner}/${r.repo}`.toLowerCase();
      const repositories = (raw.repositories ?? []).map((x) => x.full_name);
      const granted = Object.fromEntries(
        Object.entries(raw.permissions ?? {}).filter((kv): kv is [string, string] => typeof kv[1] === "string"),
      );
      const beyond = Object.entries(granted).filter(
        ([k, v]) => RUN_TOKEN_PERMISSIONS[k] === undefined || (v !== "read" && RUN_TOKEN_PERMISSIONS[k] !== v),
      );
      if (repositories.length !== 1 || repositories[0]!.toLowerCase() !== want || beyond.length > 0)
        throw new GitHubError(
          "mint run token",
          undefined,
          `GitHub answered a token broader than asked (repositories ${JSON.stringify(repositories)}, ` +
            `permissions ${JSON.stringify(granted)}); it is not handed on`,
          false,
        );
      const expiresAt = new Date(raw.expires_at);
      if (Number.isNaN(expiresAt.getTime()))
        throw new GitHubError("mint run token", undefined, `expires_at is not a time: ${raw.expires_at}`, false);
      return { token: raw.token, expiresAt, permissions: granted, repositories };
    },
  };
}
