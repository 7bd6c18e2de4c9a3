// The fleet benchmark reads its interlock lag from the label writes GitHub saw: by name over REST, and by node
// id in a GraphQL swap. A write it cannot read would count the claim as never told.
import { labelWrites } from "../../bench/fleet/report.js";
import type { RecordedRequest } from "../fake-github/http.js";

const nodes = {
  issues: { I_one: 1, I_two: 2 },
  labels: { LA_queued: "agent:queued", LA_in: "agent:in-progress", LA_review: "agent:review" },
};

const rest = (method: string, path: string, body: unknown = null): RecordedRequest =>
  ({ method, path, query: {}, body, headers: {}, at: 0 }) as RecordedRequest;

const swap = (variables: Record<string, unknown>, operationName = "SwapLabels"): RecordedRequest =>
  ({
    method: "POST",
    path: "/graphql",
    query: {},
    body: {},
    headers: {},
    at: 0,
    graphql: { operationName, variables },
  }) as RecordedRequest;

test.each([
  [
    "a REST add",
    rest("POST", "/repos/acme/app/issues/1/labels", { labels: ["agent:in-progress"] }),
    [{ issue: 1, adds: ["agent:in-progress"], removes: [], set: false }],
  ],
  [
    "a REST removal",
    rest("DELETE", "/repos/acme/app/issues/2/labels/agent%3Aqueued"),
    [{ issue: 2, adds: [], removes: ["agent:queued"], set: false }],
  ],
  [
    "a REST set",
    rest("PUT", "/repos/acme/app/issues/1/labels", { labels: ["bug"] }),
    [{ issue: 1, adds: ["bug"], removes: [], set: true }],
  ],
  ["a REST read", rest("GET", "/repos/acme/app/issues/1/labels"), []],
  [
    "a GraphQL swap, by node ids",
    swap({ issue0: "I_two", add0: ["LA_in"], remove0: ["LA_queued"] }),
    [{ issue: 2, adds: ["agent:in-progress"], removes: ["agent:queued"], set: false }],
  ],
  [
    "swaps on two issues in one request",
    swap({ issue0: "I_one", add0: ["LA_review"], remove0: ["LA_in"], issue1: "I_two", add1: ["LA_in"], remove1: [] }),
    [
      { issue: 1, adds: ["agent:review"], removes: ["agent:in-progress"], set: false },
      { issue: 2, adds: ["agent:in-progress"], removes: [], set: false },
    ],
  ],
  ["a swap on an issue of another repository", swap({ issue0: "I_other", add0: ["LA_in"], remove0: [] }), []],
  ["another GraphQL operation", swap({ issue0: "I_one" }, "MergedBranch"), []],
])("%s", (_, request, expected) => {
  expect(labelWrites(request, nodes)).toEqual(expected);
});
