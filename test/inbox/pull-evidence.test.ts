/**
 * An exit naming its PR is verified from GitHub's own `pull_request` delivery only when that delivery shows the
 * run's branch, in the task's repository, at the head the worker pushed; anything else makes the exit read GitHub.
 */
import { pullEvidence, pullShown, type PullExpectation } from "../../src/inbox/pull-evidence.js";
import { deepMerge, rawExample, type Payload } from "../support/webhooks.js";

const opened = rawExample("pull_request", "opened");
const pr = opened.pull_request as { number: number; head: { ref: string; sha: string; repo: { full_name: string } } };
const expected: PullExpectation = { repo: pr.head.repo.full_name, branch: pr.head.ref, headSha: pr.head.sha };
const body = (overrides: Record<string, unknown> = {}) => JSON.stringify(deepMerge<Payload>(opened, overrides));

test.each<[string, boolean, string]>([
  ["GitHub's example as sent", true, body()],
  ["another branch", false, body({ pull_request: { head: { ref: "agent/9-other" } } })],
  [
    "a fork's branch of the same name",
    false,
    body({ pull_request: { head: { repo: { full_name: "someone/fork" } } } }),
  ],
  ["an older head than the worker pushed", false, body({ pull_request: { head: { sha: "0".repeat(40) } } })],
  ["no pull request in the body", false, JSON.stringify({ action: "opened" })],
  ["a body that is not JSON", false, "{not json"],
])("%s → shown: %s", (_name, shown, payload) => {
  const got = pullShown(payload, expected);
  expect(got === null ? null : { number: got.number, headRef: got.headRef, headSha: got.headSha }).toEqual(
    shown ? { number: pr.number, headRef: pr.head.ref, headSha: pr.head.sha } : null,
  );
});

test("waits for a delivery on its way, and gives up (null) when none shows the head", async () => {
  const asked: string[] = [];
  let answers = [null, null, body()];
  const evidence = pullEvidence(
    {
      newestPayload: async (taskKey, event) => {
        asked.push(`${taskKey} ${event}`);
        return answers.shift() ?? null;
      },
    },
    { waitMs: 5_000, pollMs: 1 },
  );
  const found = await evidence(7, pr.number, expected);
  expect(found?.number).toBe(pr.number);
  expect(asked).toEqual(Array(3).fill(`7/${expected.repo}#${pr.number} pull_request`));

  answers = [];
  const never = pullEvidence(
    { newestPayload: async () => body({ pull_request: { head: { sha: "1".repeat(40) } } }) },
    {
      waitMs: 0,
      pollMs: 1,
    },
  );
  expect(await never(7, pr.number, expected)).toBeNull();
});
