/**
 * The memory port's App: the host's version, the installation's
 * repositories, a user's permission on one, and installation tokens revoked.
 */
import type { AppPort } from "../../../src/github/port.js";
import type { Memory } from "./writes.js";

export function appPort(m: Memory) {
  const { ghes, repos, liveTokens, call, repo } = m;
  return {
    hostVersion: () => call("hostVersion", [], () => ({ ghes })),
    installationRepos: () =>
      call("installationRepos", [], () => [...repos.values()].filter((x) => x.installed).map((x) => x.fullName)),
    permission: (r, username) =>
      call("permission", [r, username], () => repo("permission", r).permissions.get(username) ?? "none"),
    revokeToken: (token) =>
      call("revokeToken", [token], () => {
        if (!liveTokens.has(token)) return "unknown" as const;
        liveTokens.delete(token);
        return "revoked" as const;
      }),
  } satisfies AppPort;
}
