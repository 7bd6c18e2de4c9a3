/**
 * The fake playing another host than api.github.com: a GitHub Enterprise
 * Server answers from its own release's description. A route api.github.com
 * has and the release lacks is GitHub's 404 (listed in `hostGaps`, not a
 * violation); GET /meta says the release, in the shape its description
 * gives, to anyone; issues carry no dependency summary where there are no
 * dependencies.
 */
import { ProbotOctokit } from "probot";
import { ResponseSchemas } from "./response-schemas.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));

let fake: FakeGitHub;
afterEach(async () => {
  fake.assertNoViolations();
  await fake.close();
});

async function start(host?: "ghes-3.17" | "ghes-3.19") {
  fake = await startFakeGitHub(host ? { host, installedVersion: `${host.slice(5)}.2` } : {});
  fake.state.addInstallation(7, "acme");
  fake.state.addRepo("acme/app", { installationId: 7 });
  fake.state.addIssue("acme/app", { number: 1, title: "t", body: "", labels: [], user: "alice" });
  return new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: 7 },
    baseUrl: fake.apiUrl,
  });
}
const issue = { owner: "acme", repo: "app", issue_number: 1 };

test("GHES 3.17: no dependencies route (404, a host gap), no summary on issues, its release in GET /meta", async () => {
  const octokit = await start("ghes-3.17");
  const meta = await octokit.request("GET /meta");
  expect(meta.data).toMatchObject({ installed_version: "3.17.2" });
  expect(new ResponseSchemas("ghes-3.17").check("meta/get", 200, meta.data)).toBeNull();
  const blocked = await octokit.rest.issues.listDependenciesBlockedBy(issue).then(
    () => 200,
    (e: { status: number }) => e.status,
  );
  expect(blocked).toBe(404);
  expect(fake.hostGaps.map((q) => [q.route, q.status])).toEqual([
    ["GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", 404],
  ]);
  const { data } = await octokit.rest.issues.get(issue);
  expect(data).not.toHaveProperty("issue_dependencies_summary");
  // A route no host has is still the App's mistake.
  await octokit.request("GET /repos/{owner}/{repo}/no-such-thing", { owner: "acme", repo: "app" }).catch(() => {});
  expect(fake.violations).toEqual([expect.stringContaining("unexpected route GET /repos/acme/app/no-such-thing")]);
  fake.violations.length = 0;
});

test("GHES 3.19 and api.github.com: dependencies and their summary; GET /meta answers anyone, without a release on api.github.com", async () => {
  let octokit = await start("ghes-3.19");
  await expect(octokit.rest.issues.listDependenciesBlockedBy(issue)).resolves.toMatchObject({ status: 200 });
  expect((await octokit.rest.issues.get(issue)).data).toHaveProperty("issue_dependencies_summary");
  expect((await octokit.request("GET /meta")).data).toMatchObject({ installed_version: "3.19.2" });
  expect(fake.hostGaps).toEqual([]);
  await fake.close();

  octokit = await start();
  expect((await octokit.rest.issues.get(issue)).data).toHaveProperty("issue_dependencies_summary");
  const anonymous = new TestOctokit({ baseUrl: fake.apiUrl });
  const meta = await anonymous.request("GET /meta");
  expect(meta.data).not.toHaveProperty("installed_version");
  expect(new ResponseSchemas().check("meta/get", 200, meta.data)).toBeNull();
});
