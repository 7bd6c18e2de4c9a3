/** Question conditions as written by workers, and npm ranges, as tables. */
import { npmSatisfied, parseCondition } from "../../src/human/conditions.js";

describe("parseCondition", () => {
  test.each<[string, unknown]>([
    ["issue-closed:12", { kind: "issue-closed", number: 12 }],
    ["pr-merged:acme/app#7", { kind: "pr-merged", repo: "acme/app", number: 7 }],
    ["pr-merged:https://github.com/acme/app/pull/7", { kind: "pr-merged", repo: "acme/app", number: 7 }],
    ["pr-merged:https://ghe.example.com/acme/app/pull/7/", { kind: "pr-merged", repo: "acme/app", number: 7 }],
    ["npm-version:zod@^4.2.0", { kind: "npm-version", pkg: "zod", range: "^4.2.0" }],
    ["npm-version:@octokit/webhooks@>=14.3.0", { kind: "npm-version", pkg: "@octokit/webhooks", range: ">=14.3.0" }],
    ["issue-closed:twelve", null],
    ["issue-closed:", null],
    ["pr-merged:7", null],
    ["pr-merged:https://github.com/acme/app/issues/7", null],
    ["npm-version:zod", null],
    ["npm-version:@octokit/webhooks", null],
    ["npm-version:zod@not a range!", null],
    ["when-ready", null],
    ["", null],
  ])("%j → %j", (text, want) => {
    expect(parseCondition(text)).toEqual(want);
  });
});

describe("npmSatisfied", () => {
  test.each<[string[], string, boolean]>([
    [["1.0.0", "1.2.0"], "^1.1.0", true],
    [["1.0.0", "1.2.0"], ">=2.0.0", false],
    [["2.0.0-beta.1"], ">=2.0.0", false],
    [[], "*", false],
  ])("%j satisfy %s: %s", (versions, range, want) => {
    expect(npmSatisfied(versions, range)).toBe(want);
  });
});
