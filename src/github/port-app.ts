/**
 * The port's App and installation: the host's release, the installation's repositories, collaborators'
 * permissions, and installation tokens (port.ts composes it all).
 */
import type { HostVersion } from "./hosts.js";
import type { RepoRef } from "./repo-ref.js";

export type Permission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface AppPort {
  /** The host's release (GET /meta): GHES's `installed_version`, null on api.github.com and GHEC. */
  hostVersion(): Promise<HostVersion>;
  /** The repositories the installation may access ("owner/repo", all pages). */
  installationRepos(): Promise<string[]>;
  /** The user's permission on the repository (`role_name` reduced to the five levels). */
  permission(r: RepoRef, username: string): Promise<Permission>;
  /**
   * Revokes an installation token, authenticated with that token itself
   * (`DELETE /installation/token`). "unknown" when GitHub no longer accepts
   * it (401: expired or already revoked; 404): nothing is left to revoke.
   */
  revokeToken(token: string): Promise<"revoked" | "unknown">;
}

/** What a run's worker may do with its token: push and open its PR, read its issue. Nothing else. */
export const RUN_TOKEN_PERMISSIONS: Readonly<Record<string, "read" | "write">> = {
  contents: "write",
  pull_requests: "write",
  issues: "read",
};

/** An installation token minted for one run's worker. */
export interface RunToken {
  token: string;
  expiresAt: Date;
  /** As GitHub granted them. */
  permissions: Record<string, string>;
  /** `owner/repo` of each repository it reaches, as GitHub answered. */
  repositories: string[];
}

/**
 * Installation tokens for runs, minted as the App (its JWT):
 * `POST /app/installations/{installation_id}/access_tokens` narrowed to
 * one repository and RUN_TOKEN_PERMISSIONS. An answer that reaches more
 * than asked is refused (GitHubError), never handed on.
 */
export interface InstallationTokens {
  mint(installationId: number, r: RepoRef): Promise<RunToken>;
}
