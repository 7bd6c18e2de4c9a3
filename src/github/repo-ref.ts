/** How the port names a repository (port.ts). */

export interface RepoRef {
  owner: string;
  repo: string;
}

/** `owner/repo` as the port's repository reference. */
export function repoRef(fullName: string): RepoRef {
  const [owner, repo] = fullName.split("/") as [string, string];
  return { owner, repo };
}
