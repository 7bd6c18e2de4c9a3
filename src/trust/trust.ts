/**
 * Who counts as a trusted human. Pure: the permission comes from GitHub's
 * collaborator permission API (cached by the caller), never from
 * `author_association`, which says nothing about write access.
 */
import type { Permission } from "../github/port.js";
import type { RepoConfig } from "../config/repo.js";

const RANK: Record<Permission, number> = { none: 0, read: 1, triage: 2, write: 3, maintain: 4, admin: 5 };

export function atLeast(have: Permission, need: Permission | RepoConfig["trust"]["minPermission"]): boolean {
  return RANK[have] >= RANK[need];
}

export interface Actor {
  login: string;
  type: string;
}

export type TrustVerdict = { trusted: true; why: string } | { trusted: false; why: string };

/**
 * `permission` is consulted only for humans not on the allowlist; bots are
 * trusted only when allowlisted (another bot's label is not a human's say-so).
 */
export function judge(actor: Actor, config: RepoConfig, permission: () => Promise<Permission>): Promise<TrustVerdict> {
  const login = actor.login.toLowerCase();
  if (actor.type === "Bot") {
    return Promise.resolve(
      config.trust.bots.some((b) => b.toLowerCase() === login)
        ? { trusted: true, why: `${actor.login} is in trust.bots` }
        : { trusted: false, why: `${actor.login} is a bot and not in trust.bots` },
    );
  }
  if (config.trust.users.some((u) => u.toLowerCase() === login))
    return Promise.resolve({ trusted: true, why: `${actor.login} is in trust.users` });
  return permission().then((p) =>
    atLeast(p, config.trust.minPermission)
      ? { trusted: true, why: `${actor.login} has ${p} permission` }
      : {
          trusted: false,
          why: `${actor.login} has ${p} permission; ${config.trust.minPermission} or higher is needed`,
        },
  );
}
