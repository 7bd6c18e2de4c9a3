/**
 * Git-backed fake repositories: real `git clone/fetch/push` over smart HTTP,
 * and a REST API (branches, compare, pull requests and their merges) that
 * reports what git has.
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { signatureOf } from "../support/webhooks.js";

import { GitClient } from "./git/client.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const INSTALLATION = 4242;

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

describe("a git-backed repository", () => {
  it("is cloned with a token, and a pushed branch shows in branches and compare", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const repoJson = await client.rest(token, "GET", "/repos/acme/widgets");
    expect(repoJson.json.clone_url).toBe(client.url("acme/widgets"));
    const dir = await client.clone("acme/widgets", token);
    expect(await readFile(join(dir, "README.md"), "utf8")).toBe("widgets\n");
    const main = fake.state.repo("acme/widgets").branches.get("main");
    expect(await client.git(dir, ["rev-parse", "HEAD"])).toBe(main);

    await client.git(dir, ["checkout", "--quiet", "-b", "agent/task-1"]);
    const head = await client.commitFile(dir, "feature.txt", "new\n", "Add the feature");
    await client.git(dir, ["push", "--quiet", "origin", "agent/task-1"], token);

    const branch = await client.rest(token, "GET", "/repos/acme/widgets/branches/agent/task-1");
    expect(branch.status).toBe(200);
    expect(branch.json.commit.sha).toBe(head);
    expect(branch.json.commit.commit.message).toBe("Add the feature");
    const cmp = await client.rest(token, "GET", "/repos/acme/widgets/compare/main...agent/task-1");
    expect(cmp.json).toMatchObject({ status: "ahead", ahead_by: 1, behind_by: 0 });
    expect(cmp.json.commits.map((c: { sha: string }) => c.sha)).toEqual([head]);
    const file = await client.rest(token, "GET", "/repos/acme/widgets/contents/feature.txt?ref=agent/task-1");
    expect(Buffer.from(file.json.content, "base64").toString("utf8")).toBe("new\n");

    expect(fake.state.git.pushes).toEqual([
      expect.objectContaining({
        repo: "acme/widgets",
        ref: "refs/heads/agent/task-1",
        before: "0".repeat(40),
        after: head,
        created: true,
        deleted: false,
        forced: false,
        pusher: fake.state.botLogin,
        installationId: INSTALLATION,
        commits: [expect.objectContaining({ sha: head, added: ["feature.txt"], modified: [], removed: [] })],
      }),
    ]);
    expect(fake.requestsFor("git:git-receive-pack").map((r) => r.status)).toContain(200);
    fake.assertNoViolations();
  });

  it("merges a pull request with a real merge commit that can be fetched, and the head follows pushes", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await client.clone("acme/widgets", token);
    await client.git(dir, ["checkout", "--quiet", "-b", "topic"]);
    await client.commitFile(dir, "a.txt", "a\n", "First");
    await client.git(dir, ["push", "--quiet", "origin", "topic"], token);
    const opened = await client.rest(token, "POST", "/repos/acme/widgets/pulls", {
      title: "T",
      head: "topic",
      base: "main",
    });
    expect(opened.status).toBe(201);
    const second = await client.commitFile(dir, "b.txt", "b\n", "Second");
    await client.git(dir, ["push", "--quiet", "origin", "topic"], token);
    const pr = await client.rest(token, "GET", `/repos/acme/widgets/pulls/${opened.json.number}`);
    expect(pr.json.head.sha).toBe(second);
    expect(pr.json.mergeable).toBe(true);
    await client.git(dir, ["fetch", "--quiet", "origin", `pull/${opened.json.number}/head`], token);
    expect(await client.git(dir, ["rev-parse", "FETCH_HEAD"])).toBe(second);

    const base = fake.state.repo("acme/widgets").branches.get("main")!;
    const merged = await client.rest(token, "PUT", `/repos/acme/widgets/pulls/${opened.json.number}/merge`, {});
    expect(merged.status).toBe(200);
    await client.git(dir, ["fetch", "--quiet", "origin"], token);
    expect(await client.git(dir, ["rev-parse", "origin/main"])).toBe(merged.json.sha);
    expect(await client.git(dir, ["log", "-1", "--format=%P", merged.json.sha])).toBe(`${base} ${second}`);
    expect(await client.git(dir, ["show", `${merged.json.sha}:b.txt`])).toBe("b");
    const commit = await client.rest(token, "GET", `/repos/acme/widgets/commits/${merged.json.sha}`);
    expect(commit.json.parents.map((p: { sha: string }) => p.sha)).toEqual([base, second]);
    fake.assertNoViolations();
  });

  it("refuses to merge a pull request that conflicts with its base", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await client.clone("acme/widgets", token);
    await client.git(dir, ["checkout", "--quiet", "-b", "one"]);
    await client.commitFile(dir, "README.md", "one\n", "One");
    await client.git(dir, ["checkout", "--quiet", "-b", "two", "main"]);
    await client.commitFile(dir, "README.md", "two\n", "Two");
    await client.git(dir, ["push", "--quiet", "origin", "one", "two"], token);
    const one = await client.rest(token, "POST", "/repos/acme/widgets/pulls", {
      title: "1",
      head: "one",
      base: "main",
    });
    const two = await client.rest(token, "POST", "/repos/acme/widgets/pulls", {
      title: "2",
      head: "two",
      base: "main",
    });
    expect((await client.rest(token, "GET", `/repos/acme/widgets/pulls/${two.json.number}`)).json.mergeable).toBe(true);
    expect((await client.rest(token, "PUT", `/repos/acme/widgets/pulls/${one.json.number}/merge`, {})).status).toBe(
      200,
    );

    const after = await client.rest(token, "GET", `/repos/acme/widgets/pulls/${two.json.number}`);
    expect(after.json).toMatchObject({ mergeable: false, mergeable_state: "dirty" });
    const refused = await client.rest(token, "PUT", `/repos/acme/widgets/pulls/${two.json.number}/merge`, {});
    expect(refused).toMatchObject({ status: 405, json: { message: "Pull Request is not mergeable" } });
    const update = await client.rest(token, "PUT", `/repos/acme/widgets/pulls/${two.json.number}/update-branch`, {});
    expect(update.status).toBe(422);
    fake.assertNoViolations();
  });

  it("updates a pull request's branch with a real merge of its base", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await client.clone("acme/widgets", token);
    await client.git(dir, ["checkout", "--quiet", "-b", "topic"]);
    const head = await client.commitFile(dir, "t.txt", "t\n", "Topic");
    await client.git(dir, ["checkout", "--quiet", "main"]);
    const base = await client.commitFile(dir, "m.txt", "m\n", "Main moves");
    await client.git(dir, ["push", "--quiet", "origin", "topic", "main"], token);
    const pr = await client.rest(token, "POST", "/repos/acme/widgets/pulls", {
      title: "T",
      head: "topic",
      base: "main",
    });
    expect(pr.json.mergeable_state).toBe("behind");
    const update = await client.rest(token, "PUT", `/repos/acme/widgets/pulls/${pr.json.number}/update-branch`, {});
    expect(update.status).toBe(202);
    await client.git(dir, ["fetch", "--quiet", "origin"], token);
    const merged = await client.git(dir, ["rev-parse", "origin/topic"]);
    expect(await client.git(dir, ["log", "-1", "--format=%P", merged])).toBe(`${head} ${base}`);
    expect(await client.git(dir, ["ls-tree", "--name-only", merged])).toBe("README.md\nm.txt\nt.txt");
    expect(fake.state.pull("acme/widgets", pr.json.number).headSha).toBe(merged);
    fake.assertNoViolations();
  });

  it("records force pushes and deletions as GitHub's push webhook describes them", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    const dir = await client.clone("acme/widgets", token);
    await client.git(dir, ["checkout", "--quiet", "-b", "topic"]);
    const first = await client.commitFile(dir, "a.txt", "a\n", "A");
    await client.git(dir, ["push", "--quiet", "origin", "topic"], token);
    await client.git(dir, ["commit", "--quiet", "--amend", "-m", "A, amended"]);
    const amended = await client.git(dir, ["rev-parse", "HEAD"]);
    await client.git(dir, ["push", "--quiet", "--force", "origin", "topic"], token);
    await client.git(dir, ["push", "--quiet", "origin", "--delete", "topic"], token);
    expect(fake.state.git.pushes.map((p) => [p.before, p.after, p.forced, p.deleted])).toEqual([
      ["0".repeat(40), first, false, false],
      [first, amended, true, false],
      [amended, "0".repeat(40), false, true],
    ]);
    expect((await client.rest(token, "GET", "/repos/acme/widgets/branches/topic")).status).toBe(404);
    fake.assertNoViolations();
  });

  it.each(["squash", "rebase"] as const)(
    "merges by %s: one new commit or head's commits replayed onto base",
    async (method) => {
      const { token } = fake.state.issueToken(INSTALLATION);
      const dir = await client.clone("acme/widgets", token);
      await client.git(dir, ["checkout", "--quiet", "-b", "topic"]);
      await client.commitFile(dir, "a.txt", "a\n", "A");
      await client.commitFile(dir, "b.txt", "b\n", "B");
      await client.git(dir, ["checkout", "--quiet", "main"]);
      const base = await client.commitFile(dir, "m.txt", "m\n", "M");
      await client.git(dir, ["push", "--quiet", "origin", "topic", "main"], token);
      const pr = await client.rest(token, "POST", "/repos/acme/widgets/pulls", {
        title: "T",
        head: "topic",
        base: "main",
      });
      const merged = await client.rest(token, "PUT", `/repos/acme/widgets/pulls/${pr.json.number}/merge`, {
        merge_method: method,
      });
      expect(merged.status).toBe(200);
      await client.git(dir, ["fetch", "--quiet", "origin"], token);
      const log = await client.git(dir, ["log", "--format=%s", `${base}..origin/main`]);
      expect(log.split("\n")).toEqual(
        method === "squash" ? [`Merge pull request #${pr.json.number} from acme/topic`] : ["B", "A"],
      );
      expect(await client.git(dir, ["ls-tree", "--name-only", "origin/main"])).toBe("README.md\na.txt\nb.txt\nm.txt");
      expect(await client.git(dir, ["rev-parse", "origin/main"])).toBe(merged.json.sha);
      fake.assertNoViolations();
    },
  );

  it("delivers the push webhook to the App before git push returns", async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const app = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    try {
      fake.setWebhookTarget(`http://127.0.0.1:${(app.address() as AddressInfo).port}/`, "s3cret");
      fake.deliverPushes();
      const { token } = fake.state.issueToken(INSTALLATION);
      const dir = await client.clone("acme/widgets", token);
      const head = await client.commitFile(dir, "README.md", "changed\n", "Change the readme");
      const before = fake.state.repo("acme/widgets").branches.get("main")!;
      await client.git(dir, ["push", "--quiet", "origin", "main"], token);

      expect(received).toHaveLength(1);
      const [delivery] = received;
      expect(delivery!.headers["x-github-event"]).toBe("push");
      expect(delivery!.headers["x-hub-signature-256"]).toBe(signatureOf("s3cret", delivery!.body));
      expect(JSON.parse(delivery!.body)).toMatchObject({
        ref: "refs/heads/main",
        before,
        after: head,
        created: false,
        deleted: false,
        forced: false,
        installation: { id: INSTALLATION },
        repository: { full_name: "acme/widgets" },
        sender: { login: fake.state.botLogin },
        commits: [
          { id: head, message: "Change the readme", modified: ["README.md"], author: { email: "worker@example.com" } },
        ],
        head_commit: { id: head },
      });
      expect(fake.state.hookDeliveries.items.map((i) => [i.event, i.status])).toEqual([["push", 202]]);
      fake.assertNoViolations();
    } finally {
      app.closeAllConnections();
      await new Promise((r) => app.close(r));
    }
  });

  it("answers git as it answers REST while GitHub is down", async () => {
    const { token } = fake.state.issueToken(INSTALLATION);
    fake.outage({ status: 503 });
    const stderr = await client.fails(client.home, ["clone", client.url("acme/widgets"), "down"], token);
    expect(stderr).toContain("503");
    fake.outage(null);
    await client.clone("acme/widgets", token);
  });
});
