/**
 * GraphQL against GitHub's published schema: what the fake answers, how it
 * refuses what GitHub would refuse (HTTP 200, `{ errors }` in GitHub's
 * wording, and a violation), and that the App's own queries validate.
 */
import fs from "node:fs";
import { ProbotOctokit } from "probot";
import { githubRoot, githubSchema, issueNode, pullNode, repoNode, type GraphQLContext } from "./graphql/index.js";
import { validationErrors } from "./graphql/validation.js";
import { startFakeGitHub, type FakeGitHub } from "./index.js";

const TestOctokit = ProbotOctokit.defaults((o: Record<string, unknown>) => ({
  ...o,
  retry: { enabled: false },
  throttle: { enabled: false },
}));
type Client = InstanceType<typeof ProbotOctokit>;

const REPO = { owner: "acme", repo: "widgets" };
let fake: FakeGitHub;
let octokit: Client;

beforeEach(async () => {
  fake = await startFakeGitHub();
  fake.state.addInstallation(4242, "acme");
  fake.state.addRepo("acme/widgets", { installationId: 4242 });
  octokit = new TestOctokit({
    auth: { appId: fake.appId, privateKey: fake.privateKey, installationId: 4242 },
    baseUrl: fake.apiUrl,
  });
});

afterEach(async () => {
  await fake.close();
});

/** Sends the query as the App does and returns what the fake answered on the wire. */
async function send(
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  await octokit.graphql(query, variables).catch(() => undefined);
  const rec = fake.requests.filter((r) => r.path === "/graphql").at(-1)!;
  return { status: rec.status, body: rec.response as Record<string, unknown> };
}

const MERGE_STATE = `query PullRequestMergeState($owner: String!, $repo: String!, $number: Int!) {
  repository(owner: $owner, name: $repo) { pullRequest(number: $number) { number mergeable mergeStateStatus } }
}`;

describe("valid queries are answered", () => {
  const cases: { name: string; query: string; variables?: Record<string, unknown>; data: unknown }[] = [
    {
      name: "a pull request's merge state",
      query: MERGE_STATE,
      variables: { ...REPO, number: 1 },
      data: { repository: { pullRequest: { number: 1, mergeable: "MERGEABLE", mergeStateStatus: "CLEAN" } } },
    },
    {
      name: "an anonymous query with aliases, a fragment and __typename",
      query: `{ r: repository(owner: "acme", name: "widgets") { __typename ...R } }
        fragment R on Repository { nameWithOwner isPrivate owner { login } }`,
      data: {
        r: { __typename: "Repository", nameWithOwner: "acme/widgets", isPrivate: true, owner: { login: "acme" } },
      },
    },
    {
      name: "a union through inline fragments, labels as a connection",
      query: `query Q($n: Int!) { repository(owner: "acme", name: "widgets") { issueOrPullRequest(number: $n) {
        __typename ... on Issue { title labels(first: 1) { totalCount nodes { name } pageInfo { hasNextPage } } } ... on PullRequest { headRefName } } } }`,
      variables: { n: 2 },
      data: {
        repository: {
          issueOrPullRequest: {
            __typename: "Issue",
            title: "bug",
            labels: { totalCount: 2, nodes: [{ name: "a" }], pageInfo: { hasNextPage: true } },
          },
        },
      },
    },
    {
      name: "a connection counted without first or last",
      query: `query Q { repository(owner: "acme", name: "widgets") { issue(number: 2) { labels { totalCount } } } }`,
      data: { repository: { issue: { labels: { totalCount: 2 } } } },
    },
  ];

  it.each(cases)("$name", async ({ query, variables, data }) => {
    fake.state.addPull("acme/widgets", { head: "agent/issue-1" });
    fake.state.addIssue("acme/widgets", { title: "bug", labels: ["a", "b"] });
    expect(await send(query, variables)).toEqual({ status: 200, body: { data } });
    fake.assertNoViolations();
  });

  it("reports a missing pull request like GitHub: a NOT_FOUND field error beside data, no violation", async () => {
    expect(await send(MERGE_STATE, { ...REPO, number: 99 })).toEqual({
      status: 200,
      body: {
        data: { repository: { pullRequest: null } },
        errors: [
          {
            type: "NOT_FOUND",
            path: ["repository", "pullRequest"],
            locations: [{ line: 2, column: 44 }],
            message: "Could not resolve to a PullRequest with the number of 99.",
          },
        ],
      },
    });
    fake.assertNoViolations();
  });
});

describe("what GitHub refuses is refused in its words, and recorded", () => {
  const Q = (selection: string, vars = "") =>
    `query Q${vars} {\n  repository(owner: "acme", name: "widgets") {\n    ${selection}\n  }\n}`;
  const cases: { name: string; query: string; variables?: Record<string, unknown>; errors: unknown[] }[] = [
    {
      name: "a misspelled field",
      query: Q("isPrivat"),
      errors: [
        {
          message: "Field 'isPrivat' doesn't exist on type 'Repository'",
          locations: [{ line: 3, column: 5 }],
          path: ["query Q", "repository", "isPrivat"],
          extensions: { code: "undefinedField", typeName: "Repository", fieldName: "isPrivat" },
        },
      ],
    },
    {
      name: "a misspelled argument",
      query: Q("issue(numbr: 1) { title }"),
      errors: [
        {
          message: "Field 'issue' doesn't accept argument 'numbr'",
          locations: [{ line: 3, column: 11 }],
          path: ["query Q", "repository", "issue", "numbr"],
          extensions: { code: "argumentNotAccepted", name: "issue", typeName: "Field", argumentName: "numbr" },
        },
        {
          message: "Field 'issue' is missing required arguments: number",
          locations: [{ line: 3, column: 5 }],
          path: ["query Q", "repository", "issue"],
          extensions: { code: "missingRequiredArguments", className: "Field", name: "issue", arguments: "number" },
        },
      ],
    },
    {
      name: "a variable of the wrong type",
      query: Q("issue(number: $n) { title }", "($n: Int!)"),
      variables: { n: "7" },
      errors: [
        {
          message: "Variable $n of type Int! was provided invalid value",
          locations: [{ line: 1, column: 9 }],
          extensions: { value: "7", problems: [{ path: [], explanation: 'Could not coerce value "7" to Int' }] },
        },
      ],
    },
    {
      name: "a missing required variable",
      query: Q("issue(number: $n) { title }", "($n: Int!)"),
      errors: [
        {
          message: "Variable $n of type Int! was provided invalid value",
          locations: [{ line: 1, column: 9 }],
          extensions: { value: null, problems: [{ path: [], explanation: "Expected value to not be null" }] },
        },
      ],
    },
    {
      name: "a variable declared with a type its argument does not take",
      query: Q("issue(number: $n) { title }", "($n: String!)"),
      variables: { n: "7" },
      errors: [
        {
          message: "Type mismatch on variable $n and argument number (String! / Int!)",
          locations: [{ line: 3, column: 11 }],
          path: ["query Q", "repository", "issue", "number"],
          extensions: {
            code: "variableMismatch",
            variableName: "n",
            typeName: "String!",
            argumentName: "number",
            errorMessage: "Type mismatch",
          },
        },
      ],
    },
    {
      name: "an undeclared and an unused variable",
      query: Q("issue(number: $n) { title }", "($m: Int)"),
      errors: [
        expect.objectContaining({
          message: "Variable $n is used by Q but not declared",
          extensions: { code: "variableNotDefined", variableName: "n" },
        }),
        expect.objectContaining({
          message: "Variable $m is declared by Q but not used",
          extensions: { code: "variableNotUsed", variableName: "m" },
        }),
      ],
    },
    {
      name: "a literal of the wrong type",
      query: Q('issue(number: "7") { title }'),
      errors: [
        expect.objectContaining({
          message: `Argument 'number' on Field 'issue' has an invalid value ("7"). Expected type 'Int!'.`,
          path: ["query Q", "repository", "issue", "number"],
        }),
      ],
    },
    {
      name: "selections on a scalar and none on an object",
      query: Q("name { x } owner"),
      errors: [
        expect.objectContaining({
          message: `Selections can't be made on scalars (field 'name' returns String but has selections ["x"])`,
        }),
        expect.objectContaining({
          message:
            "Field must have selections (field 'owner' returns RepositoryOwner but has no selections. Did you mean 'owner { ... }'?)",
        }),
      ],
    },
    {
      name: "a syntax error",
      query: "query Q { repository(owner: ) { name } }",
      errors: [{ message: 'Unexpected ")" at [1, 29]', locations: [{ line: 1, column: 29 }] }],
    },
  ];

  it.each(cases)("$name", async ({ query, variables, errors }) => {
    const { status, body } = await send(query, variables);
    expect(status).toBe(200);
    expect(body).toEqual({ errors });
    expect(fake.violations).toHaveLength(errors.length);
    const first = (body.errors as { message: string }[])[0]!.message;
    expect(() => fake.assertNoViolations()).toThrow(first);
    fake.violations.length = 0;
  });
});

describe("what the fake does not serve fails loudly", () => {
  const cases: { name: string; query: string; error: Record<string, unknown>; data: unknown }[] = [
    {
      name: "a field",
      query: `query Q { repository(owner: "acme", name: "widgets") { name stargazerCount } }`,
      error: {
        message: "the fake GitHub does not serve Repository.stargazerCount",
        path: ["repository", "stargazerCount"],
      },
      data: { repository: null },
    },
    {
      name: "an argument",
      query: `query Q { repository(owner: "acme", name: "widgets") { issue(number: 1) { labels(first: 5, orderBy: { field: NAME, direction: ASC }) { totalCount } } } }`,
      error: {
        message: "the fake GitHub does not serve the argument orderBy of Issue.labels",
        path: ["repository", "issue", "labels"],
      },
      data: { repository: { issue: { labels: null } } },
    },
    {
      name: "a mutation",
      query: `mutation M { addComment(input: { subjectId: "I_1", body: "hi" }) { clientMutationId } }`,
      error: { message: "the fake GitHub does not serve Mutation.addComment", path: ["addComment"] },
      data: { addComment: null },
    },
    {
      name: "a connection paged without first or last (GitHub refuses it too)",
      query: `query Q { repository(owner: "acme", name: "widgets") { issue(number: 1) { labels { nodes { name } } } } }`,
      error: {
        type: "MISSING_PAGINATION_BOUNDARIES",
        message: "You must provide a `first` or `last` value to properly paginate the `labels` connection.",
      },
      data: { repository: { issue: { labels: null } } },
    },
  ];

  it.each(cases)("$name", async ({ query, error, data }) => {
    fake.state.addIssue("acme/widgets", { title: "t" });
    const { status, body } = await send(query);
    expect(status).toBe(200);
    expect(body).toEqual({ data, errors: [expect.objectContaining(error)] });
    expect(() => fake.assertNoViolations()).toThrow(String(error.message));
    fake.violations.length = 0;
  });
});

describe("label mutations, by the node ids REST and webhooks give", () => {
  const SWAP = `mutation Swap($issue: ID!, $add: [ID!]!, $remove: [ID!]!) {
    added: addLabelsToLabelable(input: {labelableId: $issue, labelIds: $add}) { clientMutationId }
    removed: removeLabelsFromLabelable(input: {labelableId: $issue, labelIds: $remove}) {
      labelable { ... on Issue { number labels(first: 10) { nodes { name } } } }
    }
  }`;
  /** The issue's node id and its repository's label ids by name, as its REST representation gives them. */
  async function ids(number: number): Promise<{ issue: string; label: (name: string) => string }> {
    const { data: issue } = await octokit.rest.issues.get({ ...REPO, issue_number: number });
    const { data: labels } = await octokit.rest.issues.listLabelsForRepo({ ...REPO, per_page: 100 });
    return { issue: issue.node_id, label: (name) => labels.find((l) => l.name === name)!.node_id };
  }

  it("adds, then removes, in the order of the document; the App's bot is the labeller", async () => {
    fake.state.addIssue("acme/widgets", { number: 1, labels: ["bug", "agent:queued"] });
    fake.state.addLabel("acme/widgets", "agent:in-progress");
    const id = await ids(1);
    const answer = await send(SWAP, {
      issue: id.issue,
      add: [id.label("agent:in-progress")],
      remove: [id.label("agent:queued")],
    });
    expect(answer).toEqual({
      status: 200,
      body: {
        data: {
          added: { clientMutationId: null },
          removed: { labelable: { number: 1, labels: { nodes: [{ name: "bug" }, { name: "agent:in-progress" }] } } },
        },
      },
    });
    expect(fake.state.labelEventsOf("acme/widgets", 1).at(-1)).toMatchObject({
      labelName: "agent:in-progress",
      actor: fake.state.botLogin,
    });
    fake.assertNoViolations();
  });

  it("a label id that names nothing: NOT_FOUND for that mutation, the other one still runs", async () => {
    fake.state.addIssue("acme/widgets", { number: 1, labels: ["agent:queued"] });
    const id = await ids(1);
    const gone = "LA_kwDOAAAAAAAAAAAA";
    const { body } = await send(SWAP, { issue: id.issue, add: [gone], remove: [id.label("agent:queued")] });
    expect(body["errors"]).toEqual([
      expect.objectContaining({ type: "NOT_FOUND", path: ["added"], message: expect.stringContaining(gone) }),
    ]);
    expect(body["data"]).toEqual({ added: null, removed: { labelable: { number: 1, labels: { nodes: [] } } } });
    expect(fake.state.labelsOf("acme/widgets", 1)).toEqual([]);
    fake.assertNoViolations();
  });

  it("an issue of another installation is not there for this one", async () => {
    fake.state.addInstallation(7, "other");
    fake.state.addRepo("other/app", { installationId: 7 });
    const theirs = fake.state.addIssue("other/app", { number: 1, labels: ["agent:queued"] });
    const label = fake.state.addLabel("other/app", "agent:queued");
    const { body } = await send(SWAP, {
      issue: `I_${Buffer.from(`0:I${theirs.id}`).toString("base64url")}`,
      add: [],
      remove: [`LA_${Buffer.from(`0:LA${label.id}`).toString("base64url")}`],
    });
    expect((body["errors"] as Array<{ type: string }>).map((e) => e.type)).toEqual(["NOT_FOUND", "NOT_FOUND"]);
    expect(fake.state.labelsOf("other/app", 1)).toEqual(["agent:queued"]);
  });
});

describe("the App's queries", () => {
  const source = ["octokit.ts", "queries.ts"]
    .map((f) => fs.readFileSync(new URL(`../../src/github/${f}`, import.meta.url), "utf8"))
    .join("\n");
  // As a template literal's value: a backslash at the end of a line continues it.
  // A document made for its size (label swaps) is a template with placeholders: test/github/hosts.test.ts
  // validates it as made.
  const queries = [...source.matchAll(/`\s*((?:query|mutation)\b[^`]*)`/g)]
    .map((m) => m[1]!.replace(/\\\n/g, ""))
    .filter((q) => !q.includes("${"));

  it("are found in src/github/octokit.ts and queries.ts and validate against GitHub's schema", async () => {
    expect(queries.length).toBeGreaterThan(1);
    const { graphql, schema } = await githubSchema();
    for (const q of queries)
      expect({ q, errors: validationErrors(graphql, schema, graphql.parse(q)) }).toEqual({ q, errors: [] });
  });
});

describe("the object graph", () => {
  it("has only fields GitHub's schema has, on the types it names", async () => {
    const { schema, graphql } = await githubSchema();
    const issue = fake.state.addIssue("acme/widgets", { title: "t" });
    const pr = fake.state.addPull("acme/widgets", { head: "agent/x" });
    const repo = fake.state.findRepo("acme/widgets")!;
    const ctx: GraphQLContext = { state: fake.state, json: fake.json, installationId: 4242 };
    const objects: [string, Record<string, unknown>][] = [
      ["Query", githubRoot(ctx)],
      ["Repository", repoNode(ctx, repo)],
      ["Issue", issueNode(ctx, repo, repo.issues.get(issue.number)!)],
      ["PullRequest", pullNode(ctx, repo, repo.pulls.get(pr.number)!)],
    ];
    for (const [typeName, obj] of objects) {
      const type = schema.getType(typeName);
      if (!graphql.isObjectType(type)) throw new Error(typeName);
      const unknown = Object.keys(obj).filter((k) => k !== "__typename" && !(k in type.getFields()));
      expect({ typeName, unknown }).toEqual({ typeName, unknown: [] });
    }
  });
});
