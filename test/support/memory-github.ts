/**
 * An in-memory GitHub port for unit tests: no server, no octokit, answers in
 * the port's own terms. It keeps the state the port's methods read and write
 * (repositories with a commit graph and branches, issues with labels,
 * comments and reactions, pull requests, check runs, workflows and their
 * runs, permissions, config files), so a write is seen by a later read: a
 * label added is in the next `issueLabels`, a comment created is in the next
 * `listComments`, a check run created is in the next `checkRunsForRef`.
 *
 * Every call of a port method is recorded (`calls`), and a test can make a
 * method throw (`fail`, `failNext`), typically a GitHubError built by
 * `gitHubError` the way the octokit adapter builds its own. Where GitHub
 * itself refuses (a missing issue, a duplicate pull request, an unknown
 * workflow) the fake throws a GitHubError as the adapter would; what the
 * fake does not model (an unknown repository, GraphQL without a handler)
 * throws a plain Error naming the method, never a plausible wrong answer.
 *
 * The object `satisfies GitHub`: a method added to the port does not compile
 * here until the fake has it too.
 *
 * It is composed of one part per area of the port, each made from the shared
 * context (memory-github/context.ts: the state, the ids, the recording of
 * calls and the lookups) and the writes the port and the seeding helpers
 * share (memory-github/writes.ts): issues.ts, pulls.ts, refs.ts, checks.ts
 * and app.ts, as the port is split into src/github/port-*.ts. The test's
 * controls are calls.ts (the calls recorded, the failures injected),
 * arrange.ts (GitHub's state arranged) and readers.ts (GitHub's state read);
 * views.ts makes the port's types from the records.
 *
 * The failures it makes and refuses are in memory-github/failures.ts; the
 * seeds a test passes, the records it keeps and what a call records are in
 * memory-github/records.ts.
 */
import type { GitHub } from "../../src/github/port.js";
import { appPort } from "./memory-github/app.js";
import { arranging } from "./memory-github/arrange.js";
import { callControls } from "./memory-github/calls.js";
import { checksPort } from "./memory-github/checks.js";
import { memoryContext } from "./memory-github/context.js";
import { issuesPort } from "./memory-github/issues.js";
import { pullsPort } from "./memory-github/pulls.js";
import { readers } from "./memory-github/readers.js";
import type { MemoryGitHubInit } from "./memory-github/records.js";
import { refsPort } from "./memory-github/refs.js";
import { memoryWrites, type Memory } from "./memory-github/writes.js";

export { gitHubError, OPERATIONS, type GitHubErrorKind, type PortMethod } from "./memory-github/failures.js";
export type {
  FailOptions,
  IssueSeed,
  MemoryCall,
  MemoryGitHubInit,
  PullSeed,
  RepoSeed,
  StoredComment,
  StoredWorkflowRun,
  WorkflowSeed,
} from "./memory-github/records.js";

export type MemoryGitHub = ReturnType<typeof memoryGitHub>;

export function memoryGitHub(init: MemoryGitHubInit = {}) {
  const ctx = memoryContext(init);
  const m: Memory = { ...ctx, ...memoryWrites(ctx) };
  for (const [name, seed] of Object.entries(init.repos ?? {})) m.addRepo(name, seed);

  // ---- the port ----

  const port = {
    ...issuesPort(m),
    ...pullsPort(m),
    ...refsPort(m),
    ...checksPort(m),
    ...appPort(m),
  } satisfies GitHub;

  // ---- the test's controls ----

  return {
    ...port,
    ...callControls(m),
    ...arranging(m),
    ...readers(m),
  };
}
