/**
 * Installation tokens narrowed to repositories and permissions, minted and
 * revoked like GitHub: through the App's own port adapter (octokit-tokens.ts)
 * and Probot's Octokit, so what passes here is what the broker will see.
 */
import { ProbotOctokit } from "probot";
import { octokitInstallationTokens } from "../../src/github/octokit-tokens.js";
import { octokitGitHub } from "../../src/github/octokit.js";
import { GitHubError, RUN_TOKEN_PERMISSIONS } from "../../src/github/port.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));
type Client = InstanceType<typeof ProbotOctokit>;

const INSTALLATION = 4242;
let fake: FakeGitHub;

const app = () =>
  Promise.resolve(new TestOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: fake.apiUrl }));
const asToken = (token: string): Client => new TestOctokit({ auth: { token }, baseUrl: fake.apiUrl });
const installation = (): Client =>
  new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: INSTALLATION },
    baseUrl: fake.apiUrl,
  });

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return (e as { status?: number }).status ?? -1;
  }
}

beforeEach(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo("acme/widgets", { installationId: INSTALLATION });
  fake.state.addRepo("acme/other", { installationId: INSTALLATION });
});

afterEach(async () => {
  fake.assertNoViolations();
  await fake.close();
});

describe("a run token", () => {
  it("is minted as the App for one repository with only a run's permissions", async () => {
    const t = await octokitInstallationTokens(app).mint(INSTALLATION, { owner: "acme", repo: "widgets" });
    expect(t.repositories).toEqual(["acme/widgets"]);
    expect(t.permissions).toEqual(RUN_TOKEN_PERMISSIONS);
    const mint = fake.requestsFor("apps/create-installation-access-token").at(-1)!;
    expect(mint.headers.authorization).toMatch(/^bearer ey/);
    expect(mint.body).toEqual({ repositories: ["widgets"], permissions: RUN_TOKEN_PERMISSIONS });
    const held = fake.state.tokens.get(t.token)!;
    expect(held.repositories).toEqual(["acme/widgets"]);
    expect(held.permissions).toEqual({ contents: "write", pull_requests: "write", issues: "read" });
    // GitHub answers expires_at to the second.
    expect(t.expiresAt.getTime()).toBe(Math.floor(held.expiresAt.getTime() / 1000) * 1000);
  });

  it("reaches its repository, not another one (404), and cannot write issues (403)", async () => {
    const t = await octokitInstallationTokens(app).mint(INSTALLATION, { owner: "acme", repo: "widgets" });
    fake.state.addIssue("acme/widgets", { number: 1, title: "x", user: "alice" });
    const client = asToken(t.token);
    expect(await status(client.rest.issues.get({ owner: "acme", repo: "widgets", issue_number: 1 }))).toBe(200);
    expect(await status(client.rest.repos.get({ owner: "acme", repo: "other" }))).toBe(404);
    const write = client.rest.issues.createComment({ owner: "acme", repo: "widgets", issue_number: 1, body: "hi" });
    await expect(write).rejects.toMatchObject({
      status: 403,
      response: { data: { message: "Resource not accessible by integration" } },
    });
    const pull = client.rest.pulls.list({ owner: "acme", repo: "widgets" });
    expect(await status(pull)).toBe(200);
  });

  it("is refused for a repository the installation lacks or a permission beyond its own (422)", async () => {
    fake.state.addInstallation(7, "globex");
    fake.state.addRepo("globex/secret", { installationId: 7 });
    const tokens = octokitInstallationTokens(app);
    const before = fake.state.tokens.size;
    await expect(tokens.mint(INSTALLATION, { owner: "globex", repo: "secret" })).rejects.toMatchObject({
      status: 422,
    });
    fake.state.installations.get(INSTALLATION)!.permissions["contents"] = "read";
    await expect(tokens.mint(INSTALLATION, { owner: "acme", repo: "widgets" })).rejects.toBeInstanceOf(GitHubError);
    expect(fake.requestsFor("apps/create-installation-access-token").map((r) => r.status)).toEqual([422, 422]);
    expect(fake.state.tokens.size).toBe(before);
  });

  it("is revoked with itself (204), and is refused everywhere afterwards (401)", async () => {
    const t = await octokitInstallationTokens(app).mint(INSTALLATION, { owner: "acme", repo: "widgets" });
    // The port of the installation revokes the run's token, not its own.
    const port = octokitGitHub(installation());
    await port.defaultBranch({ owner: "acme", repo: "widgets" });
    expect(await port.revokeToken(t.token)).toBe("revoked");
    const revoke = fake.requestsFor("apps/revoke-installation-access-token").at(-1)!;
    expect(revoke.status).toBe(204);
    expect(revoke.headers.authorization).toBe(`token ${t.token}`);
    expect(fake.state.tokens.get(t.token)!.revokedAt).toBeInstanceOf(Date);
    expect(fake.state.tokenLive(t.token)).toBe(false);
    expect(await status(asToken(t.token).rest.repos.get({ owner: "acme", repo: "widgets" }))).toBe(401);
    // The installation's own token still works; a second revocation finds nothing to revoke.
    await port.defaultBranch({ owner: "acme", repo: "widgets" });
    expect(await port.revokeToken(t.token)).toBe("unknown");
  });
});

describe("a suspended installation", () => {
  test("refuses new tokens and the ones minted before, with GitHub's 403, until it is unsuspended", async () => {
    const client = installation();
    const read = () => client.rest.repos.get({ owner: "acme", repo: "widgets" });
    expect(await status(read())).toBe(200);
    fake.state.installations.get(INSTALLATION)!.suspendedAt = new Date();
    // The token the client minted before: refused on every call.
    const refused = await read().catch((e: { status?: number; response?: { data?: { message?: string } } }) => e);
    expect(refused).toMatchObject({
      status: 403,
      response: { data: { message: "This installation has been suspended" } },
    });
    // A new one: refused at minting.
    expect(await status(installation().rest.repos.get({ owner: "acme", repo: "widgets" }))).toBe(403);
    fake.state.installations.get(INSTALLATION)!.suspendedAt = null;
    expect(await status(read())).toBe(200);
  });
});
