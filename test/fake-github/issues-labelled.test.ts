/**
 * The fake GitHub serves the App's IssuesLabelled query (Repository.issues
 * filtered by label and state, paged 100 at a time; each issue's labels, its
 * labeled events and its sub-issues), read through the real port
 * (`issuesLabelled` of the octokit adapter) on Probot's octokit with
 * installation auth, every query validated against GitHub's schema.
 *
 * Who added a label is recorded wherever a label is added: REST writes are
 * the App's bot (which GraphQL names by its slug, without `[bot]`), helpers
 * the issue's author, `labelledBy` or `state.labelIssue`'s user.
 */
import { ProbotOctokit } from "probot";
import { octokitGitHub } from "../../src/github/octokit.js";
import type { GitHub, LabelledIssue } from "../../src/github/port.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));
type Client = InstanceType<typeof ProbotOctokit>;

const REPO = "acme/widgets";
const OTHER = "acme/gadgets";
const r = { owner: "acme", repo: "widgets" };
const INSTALLATION = 4242;
const AGENT_LABELS = ["agent:queued", "agent:in-progress", "agent:review", "agent:failed"];

let fake: FakeGitHub;
let gh: GitHub;
let octokit: Client;
let now: Date;

const at = (minutes: number) => new Date(Date.UTC(2025, 0, 1, 10, minutes));
const iso = (minutes: number) =>
  at(minutes)
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z");

beforeEach(async () => {
  fake = await startFakeGitHub();
  now = at(0);
  fake.state.clock = () => now;
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION });
  fake.state.addRepo(OTHER, { installationId: INSTALLATION });
  octokit = new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: INSTALLATION },
    baseUrl: fake.apiUrl,
  });
  gh = octokitGitHub(octokit);
});

afterEach(async () => {
  fake.assertNoViolations();
  await fake.close();
});

const queries = () => fake.requestsFor("graphql:IssuesLabelled");

function issue(over: Partial<LabelledIssue> & Pick<LabelledIssue, "number">): LabelledIssue {
  return {
    state: "open",
    isPullRequest: false,
    title: `Issue ${over.number}`,
    body: "",
    labels: [],
    labelledBy: [],
    subIssues: [],
    subIssuesTotal: 0,
    ...over,
  };
}

test("issues carrying any of the labels, open and closed, never a pull request; who added each asked-for label, a user or the App's bot", async () => {
  const s = fake.state;
  s.addIssue(REPO, { number: 1, user: "alice", labels: ["agent:queued"], createdAt: at(1), body: "do it" });
  s.addIssue(REPO, {
    number: 2,
    user: "carol",
    labels: ["Agent:Failed", "bug"],
    labelledBy: "bob",
    state: "closed",
    createdAt: at(2),
  });
  s.addIssue(REPO, { number: 3, user: "alice", labels: ["bug"], createdAt: at(3) });
  s.addPull(REPO, { number: 4, head: "agent/issue-1", user: "alice", labels: ["agent:queued"] });
  s.addIssue(REPO, { number: 5, user: "dave", createdAt: at(5) });
  s.addIssue(REPO, { number: 6, user: "erin", labels: ["bug"], createdAt: at(6) });

  now = at(10);
  expect((await gh.addLabels(r, 5, ["agent:in-progress"])).map((l) => l.name)).toEqual(["agent:in-progress"]);
  now = at(11);
  s.labelIssue(REPO, 6, "agent:review", "erin");
  now = at(12);
  await gh.removeLabel(r, 6, "agent:review");
  now = at(13);
  s.labelIssue(REPO, 6, "agent:review", "frank");
  now = at(14);
  s.labelIssue(REPO, 6, "agent:review", "grace"); // already there: no event
  expect(s.labelEventsOf(REPO, 6).map((e) => [e.labelName, e.actor])).toEqual([
    ["bug", "erin"],
    ["agent:review", "erin"],
    ["agent:review", "frank"],
  ]);

  const read = await gh.issuesLabelled(r, ["agent:queued", "AGENT:IN-PROGRESS", "agent:review", "agent:failed"]);
  expect(read).toEqual([
    issue({
      number: 1,
      body: "do it",
      labels: ["agent:queued"],
      labelledBy: [{ label: "agent:queued", actor: "alice", actorType: "User", at: iso(1) }],
    }),
    issue({
      number: 2,
      state: "closed",
      labels: ["Agent:Failed", "bug"],
      labelledBy: [{ label: "Agent:Failed", actor: "bob", actorType: "User", at: iso(2) }],
    }),
    // GraphQL names a bot by its App's slug, without REST's `[bot]`
    issue({
      number: 5,
      labels: ["agent:in-progress"],
      labelledBy: [{ label: "agent:in-progress", actor: "orchestra-test[bot]", actorType: "Bot", at: iso(10) }],
    }),
    // labelled, unlabelled, labelled again: the latest labeled event counts
    issue({
      number: 6,
      labels: ["bug", "agent:review"],
      labelledBy: [{ label: "agent:review", actor: "frank", actorType: "User", at: iso(13) }],
    }),
  ]);
  expect(queries()).toHaveLength(1);
  expect(await gh.issuesLabelled(r, ["agent:blocked"])).toEqual([]);
});

test("130 labelled issues come in two pages of one query each, oldest first (by creation, not number)", async () => {
  const s = fake.state;
  // numbered against their creation order, with unlabelled issues and a labelled pull request between them
  for (let n = 1; n <= 130; n++) {
    s.addIssue(REPO, {
      number: n * 2,
      labels: [AGENT_LABELS[n % 4]!],
      state: n % 3 ? "open" : "closed",
      createdAt: at(1000 - n),
    });
    s.addIssue(REPO, { number: n * 2 + 1, createdAt: at(1000 - n) });
  }
  s.addPull(REPO, { number: 1000, head: "agent/issue-2", labels: ["agent:queued"] });

  const read = await gh.issuesLabelled(r, AGENT_LABELS);
  expect(read.map((i) => i.number)).toEqual(Array.from({ length: 130 }, (_, k) => (130 - k) * 2));
  expect(read.filter((i) => i.state === "closed")).toHaveLength(43);
  expect(read[0]).toEqual(
    issue({
      number: 260,
      title: "Issue 260",
      labels: ["agent:review"],
      labelledBy: [{ label: "agent:review", actor: "octocat", actorType: "User", at: iso(870) }],
    }),
  );

  const pages = queries();
  expect(pages).toHaveLength(2);
  expect(pages[0]!.graphql!.variables).toMatchObject({
    owner: "acme",
    repo: "widgets",
    labels: AGENT_LABELS,
    cursor: null,
  });
  expect(pages[1]!.graphql!.variables.cursor).toEqual(expect.any(String));
});

test("sub-issues, open and closed and in another repository, in the order they were added; the first 50 of more with their total", async () => {
  const s = fake.state;
  s.addIssue(REPO, { number: 1, labels: ["agent:queued"], createdAt: at(1) });
  s.addIssue(REPO, { number: 2, createdAt: at(2) });
  s.addIssue(REPO, { number: 3, state: "closed", createdAt: at(3) });
  s.addIssue(OTHER, { number: 7, createdAt: at(4) });
  s.addSubIssue(REPO, 1, REPO, 3);
  s.addSubIssue(REPO, 1, OTHER, 7);
  s.addSubIssue(REPO, 1, REPO, 2);
  s.addSubIssue(REPO, 1, REPO, 2); // idempotent

  s.addIssue(REPO, { number: 10, labels: ["agent:in-progress"], createdAt: at(10) });
  for (let n = 100; n < 160; n++) {
    s.addIssue(REPO, { number: n, createdAt: at(n) });
    s.addSubIssue(REPO, 10, REPO, n);
  }
  s.closeIssue(REPO, 100);

  expect(s.subIssuesOf(REPO, 1).map((c) => `${c.repo.fullName}#${c.issue.number}`)).toEqual([
    `${REPO}#3`,
    `${OTHER}#7`,
    `${REPO}#2`,
  ]);
  const [one, ten] = await gh.issuesLabelled(r, AGENT_LABELS);
  expect(one!.subIssues).toEqual([
    { repo: REPO, number: 3, state: "closed" },
    { repo: OTHER, number: 7, state: "open" },
    { repo: REPO, number: 2, state: "open" },
  ]);
  expect(one!.subIssuesTotal).toBe(3);
  expect(ten!.subIssues).toHaveLength(50);
  expect(ten!.subIssues.slice(0, 2)).toEqual([
    { repo: REPO, number: 100, state: "closed" },
    { repo: REPO, number: 101, state: "open" },
  ]);
  expect(ten!.subIssuesTotal).toBe(60);
  // the sub-issues themselves carry no asked-for label
  expect((await gh.issuesLabelled(r, AGENT_LABELS)).map((i) => i.number)).toEqual([1, 10]);
});

test("sub-issues as on GitHub: one parent each, no pull requests, no cycles", () => {
  const s = fake.state;
  for (const n of [1, 2, 3]) s.addIssue(REPO, { number: n });
  s.addPull(REPO, { number: 4, head: "feature" });
  s.addSubIssue(REPO, 1, REPO, 2);
  s.addSubIssue(REPO, 2, REPO, 3);
  expect(() => s.addSubIssue(REPO, 3, REPO, 2)).toThrow(/one parent/);
  expect(() => s.addSubIssue(REPO, 3, REPO, 1)).toThrow(/ancestor/);
  expect(() => s.addSubIssue(REPO, 1, REPO, 1)).toThrow(/its own sub-issue/);
  expect(() => s.addSubIssue(REPO, 1, REPO, 4)).toThrow(/pull requests/);
  expect(s.subIssues.parentOf(s.issue(REPO, 3))?.issue.number).toBe(2);
});

interface TimelineAnswer {
  viewer: { login: string };
  repository: { issue: { author: unknown; timelineItems: unknown } };
}

test("labels added through REST are the App's bot's, a renamed label is named as it is now, and the timeline serves only labeled events", async () => {
  const s = fake.state;
  const created = await octokit.rest.issues.create({ ...r, title: "From the App", labels: ["agent:queued"] });
  await octokit.rest.issues.update({
    ...r,
    issue_number: created.data.number,
    labels: ["agent:queued", "agent:review"],
  });
  await octokit.rest.issues.updateLabel({ ...r, name: "agent:queued", new_name: "agent:waiting" });
  expect(s.labelEventsOf(REPO, created.data.number).map((e) => [e.labelName, e.actor])).toEqual([
    ["agent:queued", "orchestra-test[bot]"],
    ["agent:review", "orchestra-test[bot]"],
  ]);

  const q = `query Timeline($owner: String!, $repo: String!, $number: Int!) {
    viewer { login }
    repository(owner: $owner, name: $repo) {
      issue(number: $number) {
        author { __typename login url }
        timelineItems(itemTypes: [LABELED_EVENT], first: 10) { totalCount nodes { __typename ... on LabeledEvent { label { name } actor { __typename login } labelable { __typename } } } }
      }
    }
  }`;
  const data = await octokit.graphql<TimelineAnswer>(q, { ...r, number: created.data.number });
  expect(data.viewer.login).toBe("orchestra-test[bot]");
  expect(data.repository.issue.author).toEqual({
    __typename: "Bot",
    login: "orchestra-test",
    url: `${fake.url}/apps/orchestra-test`,
  });
  expect(data.repository.issue.timelineItems).toEqual({
    totalCount: 2,
    nodes: ["agent:waiting", "agent:review"].map((name) => ({
      __typename: "LabeledEvent",
      label: { name },
      actor: { __typename: "Bot", login: "orchestra-test" },
      labelable: { __typename: "Issue" },
    })),
  });

  const other = q.replace("[LABELED_EVENT]", "[LABELED_EVENT, UNLABELED_EVENT]").replace("Timeline(", "TimelineOther(");
  await expect(octokit.graphql(other, { ...r, number: created.data.number })).rejects.toThrow(
    /serves only LABELED_EVENT/,
  );
  expect(fake.violations.splice(0)).toEqual([
    expect.stringMatching(
      /^graphql TimelineOther: the fake GitHub serves only LABELED_EVENT items of timelineItems \(asked for UNLABELED_EVENT\) \(at repository\.issue\.timelineItems;/,
    ),
  ]);
});
