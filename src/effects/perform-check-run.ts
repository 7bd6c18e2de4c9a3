/**
 * The check run's performer, which starts from what GitHub already said (effects/seen.ts) instead of reading it
 * again (the label performers, which do too, are in perform-labels.ts).
 *
 * A check run whose id Orchestra recorded at its creation is updated by that id; it is looked for on GitHub
 * only when a creation's answer was lost (or the id is gone there), so a commit's first summary is created
 * without a read.
 */
import { GitHubError, repoRef, type GitHub, type RepoRef } from "../github/port.js";
import { CHECK_RUN_NAME } from "../texts/check-run.js";
import { fitted, GITHUB_CHECK_SUMMARY_LIMIT } from "../texts/limits.js";
import { done, dropped, type Performer } from "./performed.js";

/** Orchestra's check run on the commit, looked for on GitHub; its id, or null. */
async function lookFor(github: GitHub, r: RepoRef, headSha: string): Promise<number | null> {
  return (await github.checkRunsForRef(r, headSha)).find((c) => c.name === CHECK_RUN_NAME)?.id ?? null;
}

export const checkRunPerformer: Performer<"check-run"> = {
  async perform({ effect, github, task, checkRunOf, seen }, p) {
    if (!task || !checkRunOf) return dropped("no task to show");
    const view = await checkRunOf(task.id, p.headSha);
    if (!view) return dropped("no task to show");
    const r = repoRef(effect.repo);
    const summary = fitted(
      view.summary,
      GITHUB_CHECK_SUMMARY_LIMIT,
      `shown by the task view in Orchestra's operator API (GET /api/v1/tasks/${task.id})`,
    );
    const fields = { status: "completed" as const, conclusion: view.conclusion, title: view.title, summary };
    const known = seen ? await seen.checkRun(effect.repo, p.headSha) : "creating";
    if (typeof known === "number") {
      try {
        await github.updateCheckRun(r, known, fields);
        return done({ updated: true });
      } catch (err) {
        // Gone on GitHub (or never the App's): looked for below like a lost answer.
        if (!(err instanceof GitHubError && err.status === 404)) throw err;
      }
    }
    const existing = known === null ? null : await lookFor(github, r, p.headSha);
    if (existing !== null) {
      await github.updateCheckRun(r, existing, fields);
      await seen?.sawCheckRun(effect.repo, p.headSha, existing);
      return done({ updated: true });
    }
    // Marked first: if the answer is lost, the next attempt looks on GitHub before creating another.
    await seen?.sawCheckRun(effect.repo, p.headSha, null);
    const id = await github.createCheckRun(r, { name: CHECK_RUN_NAME, headSha: p.headSha, ...fields });
    await seen?.sawCheckRun(effect.repo, p.headSha, id);
    return done({ updated: false });
  },
};
