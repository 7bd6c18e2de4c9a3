/**
 * The fake's world: installations, repositories and everything in them, plus
 * helpers to arrange fixtures. Routes read and write this state directly, and
 * tests may too (`fake.state`), so keep invariants inside these methods rather
 * than in the routes.
 *
 * Git is modelled as a commit graph (sha → parents) with branches pointing
 * into it, so `compare`, "behind base" and "commits ahead" fall out of the
 * same data the refs API changes.
 *
 * FakeState is built from one part per area, each extending the last:
 * state/core.ts (ids, users, installations, tokens, repositories),
 * state/issues.ts, state/git.ts, state/checks.ts, state/actions.ts and
 * state/pulls.ts; the shapes are in state/types.ts and state/repo.ts.
 */
import { GitHost } from "./git/host.js";
import { PullState } from "./state/pulls.js";

export * from "./state/types.js";
export { Repo } from "./state/repo.js";
export { DEFAULT_EVENTS, DEFAULT_PERMISSIONS, splitRepo, type AppIdentity, type FakeHost } from "./state/core.js";

export class FakeState extends PullState {
  /** git-backed repositories, served over smart HTTP, and the pushes they received (git/host.ts) */
  readonly git: GitHost = new GitHost(this);
}
