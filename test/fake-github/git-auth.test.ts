/**
 * Who may fetch and push a git-backed fake repository: GitHub's rules for an
 * App's installation tokens (see git/auth.ts).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ProbotOctokit } from "probot";
import { GitClient } from "./git/client.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const INSTALLATION = 4242;
const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

let fake: FakeGitHub;
let client: GitClient;

beforeEach(async () => {
  fake = await startFakeGitHub();
  client = await GitClient.start(fake);
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo("acme/widgets", { installationId: INSTALLATION, git: { files: { "README.md": "widgets\n" } } });
});

afterEach(async () => {
  await fake.close();
  await client.dispose();
});

describe("git authorisation", () => {
  async function pushRefusal(token?: string): Promise<string> {
    const good = fake.state.issueToken(INSTALLATION).token;
    const dir = await client.clone("acme/widgets", good);
    await client.git(dir, ["checkout", "--quiet", "-b", "refused"]);
    await client.commitFile(dir, "x.txt", "x\n", "X");
    // the credential as URL userinfo this time: git then says what GitHub answered a bad one
    const remote = token ? client.url("acme/widgets", token) : "origin";
    const stderr = await client.fails(dir, ["push", remote, "refused"]);
    expect(fake.state.repo("acme/widgets").branches.has("refused")).toBe(false);
    expect(fake.state.git.pushes).toEqual([]);
    return stderr;
  }

  it("refuses a push without a token, with a bad one, or with a revoked one (401)", async () => {
    expect(await pushRefusal()).toMatch(/could not read Username|Authentication failed/);
    expect(await pushRefusal("ghs_not-a-token")).toMatch(/remote: Invalid username or token[^]*Authentication failed/);
    const revoked = fake.state.issueToken(INSTALLATION);
    revoked.revokedAt = new Date();
    expect(await pushRefusal(revoked.token)).toMatch(/Invalid username or token/);
    const statuses = fake.requestsFor("git:git-receive-pack").map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(3);
  });

  it("refuses a push with a read-only token (403)", async () => {
    const readOnly = fake.state.issueToken(INSTALLATION);
    readOnly.permissions = { contents: "read", metadata: "read" };
    const stderr = await pushRefusal(readOnly.token);
    expect(stderr).toContain(`remote: Permission to acme/widgets.git denied to ${fake.state.botLogin}.`);
    expect(stderr).toContain("403");
  });

  it("refuses a token minted for another repository, as a private repository it cannot see (404)", async () => {
    fake.state.addRepo("acme/other", { installationId: INSTALLATION });
    const app = new TestOctokit({ auth: { appId: fake.appId, privateKey: fake.privateKey }, baseUrl: fake.apiUrl });
    const minted = await app.request("POST /app/installations/{installation_id}/access_tokens", {
      installation_id: INSTALLATION,
      repositories: ["other"],
    });
    const narrowed = (minted.data as { token: string }).token;
    expect(fake.state.tokens.get(narrowed)!.repositories).toEqual(["acme/other"]);
    expect(await pushRefusal(narrowed)).toContain("remote: Repository not found.");
    expect(
      await client.fails(client.home, ["clone", client.url("acme/widgets"), join(client.home, "nope")], narrowed),
    ).toContain("Repository not found.");
  });

  it("refuses to fetch a private repository without a token, and serves a public one to anyone", async () => {
    const stderr = await client.fails(client.home, ["clone", client.url("acme/widgets"), join(client.home, "anon")]);
    expect(stderr).toMatch(/could not read Username/);
    expect(fake.requestsFor("git:git-upload-pack")[0]).toMatchObject({
      status: 401,
      response: expect.stringContaining("Invalid username or token"),
    });
    fake.state.addRepo("acme/open", { installationId: INSTALLATION, private: false, git: true });
    await client.git(client.home, ["clone", "--quiet", client.url("acme/open"), join(client.home, "open")]);
    expect(await client.git(join(client.home, "open"), ["log", "--format=%s"])).toBe("Initial commit");
    // anyone may read it, but only a token with contents: write may push
    await writeFile(join(client.home, "open", "y.txt"), "y\n");
    await client.git(join(client.home, "open"), ["add", "y.txt"]);
    await client.git(join(client.home, "open"), ["commit", "--quiet", "-m", "Y"]);
    expect(await client.fails(join(client.home, "open"), ["push", "origin", "HEAD:main"])).toMatch(
      /could not read Username/,
    );
  });

  it("removes its bare repositories when the fake closes", async () => {
    const root = fake.state.git.projectRoot;
    await fake.close();
    await expect(readFile(join(root, `${fake.state.repo("acme/widgets").id}.git`, "HEAD"))).rejects.toThrow();
    fake = await startFakeGitHub();
  });
});
