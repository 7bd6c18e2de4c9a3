// The baseline: the smallest Probot app there is. It starts the way any plain
// Probot app starts (`run` reads the same environment names Orchestra reads)
// and acknowledges every event with a handler that does nothing, so the bare
// app's figures are the cost of Probot itself: HTTP, signature check, JSON
// parse, event dispatch. Orchestra cannot be faster than that by accident; if
// it is, the difference is its own HTTP path, not missing work.
import { run } from "probot";
import type { Probot } from "probot";

const app = (probot: Probot): void => {
  probot.onAny(async () => {});
};

await run(app);
