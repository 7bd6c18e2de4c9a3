/**
 * The run's pull request, opened by the worker when none is open for its
 * branch (GitHub's REST API, with the brokered token). Written first, read
 * only when GitHub refuses: a PR opened by an earlier attempt, or by someone
 * meanwhile, makes GitHub answer 422 "A pull request already exists", and is
 * then found, not opened twice. The happy path costs one call.
 */
export interface PullRequest {
  number: number;
  url: string;
  opened: boolean;
}

export interface PullInput {
  apiUrl: string;
  token: string;
  repo: string;
  branch: string;
  base: string;
  title: string;
  issue: number;
  fetch?: typeof fetch;
}

async function call(input: PullInput, method: string, path: string, body?: unknown): Promise<Response> {
  return (input.fetch ?? globalThis.fetch)(`${input.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${input.token}`,
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      "user-agent": "orchestra-worker",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
}

async function openFor(input: PullInput): Promise<PullRequest | null> {
  const owner = input.repo.split("/")[0]!;
  const q = new URLSearchParams({ head: `${owner}:${input.branch}`, state: "open" });
  const res = await call(input, "GET", `/repos/${input.repo}/pulls?${q.toString()}`);
  if (!res.ok) throw new Error(`GitHub answered ${res.status} listing pull requests: ${await res.text()}`);
  const list = (await res.json()) as Array<{ number: number; html_url: string }>;
  return list[0] ? { number: list[0].number, url: list[0].html_url, opened: false } : null;
}

export async function ensurePullRequest(input: PullInput): Promise<PullRequest> {
  const res = await call(input, "POST", `/repos/${input.repo}/pulls`, {
    title: input.title,
    head: input.branch,
    base: input.base,
    body: `Closes #${input.issue}`,
  });
  if (res.status === 201) {
    const pr = (await res.json()) as { number: number; html_url: string };
    return { number: pr.number, url: pr.html_url, opened: true };
  }
  const text = await res.text();
  // 422 "A pull request already exists": an earlier attempt, or someone meanwhile, opened it.
  const again = res.status === 422 ? await openFor(input) : null;
  if (again) return again;
  throw new Error(`GitHub answered ${res.status} opening the pull request: ${text.slice(0, 500)}`);
}
