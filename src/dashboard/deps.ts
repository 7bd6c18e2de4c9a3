/** What the dashboard's routes are given (routes.ts wires them; each view's routes take what they read). */
import type { FleetDeps } from "../views/fleet.js";
import type { TaskReadDeps } from "../views/task-detail.js";
import type { ViewsQueries } from "../views/queries.js";
import type { DashboardQueries } from "./queries.js";
import type { TaskActionDeps } from "../human/actions.js";
import type { Inbox } from "../inbox/store.js";
import type { githubStanding } from "../metrics/standing.js";
import type { FailureStreaks } from "../reconcile/failing.js";
import type { HostReport } from "../github/features.js";

export interface DashboardDeps extends FleetDeps, TaskReadDeps, TaskActionDeps {
  views: ViewsQueries;
  sessions: DashboardQueries;
  adminToken: string;
  inbox: Pick<Inbox, "list" | "replay" | "tally">;
  streaks: Pick<FailureStreaks, "current">;
  callHours: Parameters<typeof githubStanding>[0]["callHours"];
  rateLimits: Parameters<typeof githubStanding>[0]["rateLimits"];
  /** GitHub's web address for links: https://github.com, or the GHE host. */
  web: string;
  pokeInbox: () => void;
  pokeEffects: () => void;
  /** What is known of the GitHub host: its release and the features it lacks, with their fallbacks. */
  host: () => HostReport;
}
