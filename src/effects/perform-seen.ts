/**
 * The two performers that start from what GitHub already said (effects/seen.ts) instead of reading it again.
 *
 * A label effect whose label the issue's last delivery already shows, with none of the others, is done
 * without a call. One that adds a label the issue did not carry adds it straight away: GitHub's answer is the
 * issue's labels now, fresh evidence for which others to remove. Otherwise (nothing seen, a removal only, the
 * label there but others too) the labels are read first, as before: a label is only removed on what GitHub
 * answered right before.
 *
 * A label removal the issue was last seen without is done without a call.
 *
 * A check run whose id Orchestra recorded at its creation is updated by that id; it is looked for on GitHub
 * only when a creation's answer was lost (or the id is gone there), so a commit's first summary is created
 * without a read.
 */
import { GitHubError, repoRef, type GitHub, type RepoRef } from "../github/port.js";
import { CHECK_RUN_NAME } from "../texts/check-run.js";
import { fitted, GITHUB_CHECK_SUMMARY_LIMIT } from "../texts/limits.js";
import { done, dropped, later, type Performer } from "./performed.js";

const lower = (xs: readonly string[]) => new Set(xs.map((x) => x.toLowerCase()));

/** GitHub's answer that the issue is not there (or not any more): the read decides what that means. */
const gone = (err: unknown) => err instanceof GitHubError && (err.status === 404 || err.status === 410);

export const labelPerformer: Performer<"label"> = {
  async perform({ effect, task, github, seen, laneBusy }, p) {
    if (task && task.label !== p.label) return dropped(`superseded: the task now shows ${task.label ?? "no label"}`);
    const r = repoRef(effect.repo);
    const wanted = p.label?.toLowerCase() ?? null;
    const staleIn = (labels: readonly string[]) => {
      const present = lower(labels);
      return p.others.filter((l) => present.has(l.toLowerCase()) && l.toLowerCase() !== wanted);
    };
    const known = (await seen?.labels(effect.repo, p.issue)) ?? null;
    if (known && (wanted === null || lower(known).has(wanted)) && staleIn(known).length === 0)
      return done({ added: null, removed: [] }, "the issue's last delivery shows these labels already");

    let now: string[] | null = null;
    let added: string | null = null;
    if (p.label !== null && known && !lower(known).has(wanted!)) {
      try {
        now = await github.addLabels(r, p.issue, [p.label]);
        added = p.label;
      } catch (err) {
        if (!gone(err)) throw err;
      }
    }
    if (now === null) {
      const have = await github.issueLabels(r, p.issue);
      if (have === null) return dropped(`issue #${p.issue} no longer exists`);
      now = have;
      if (p.label !== null && !lower(have).has(wanted!)) {
        now = await github.addLabels(r, p.issue, [p.label]);
        added = p.label;
      }
    }
    const stale = staleIn(now);
    if (added !== null && stale.length > 0 && laneBusy) {
      // The label that tells who owns the issue is on; the ones it replaces wait behind the other claims' own.
      await seen?.sawLabels(effect.repo, p.issue, now);
      return later(`added ${added}; ${stale.join(", ")} removed behind the other ownership writes`);
    }
    for (const l of stale) await github.removeLabel(r, p.issue, l);
    const left = lower(stale);
    await seen?.sawLabels(
      effect.repo,
      p.issue,
      now.filter((l) => !left.has(l.toLowerCase())),
    );
    return done({ added, removed: stale });
  },
};

/**
 * A label removal the issue's labels, as GitHub last said, show nothing to do for: done without a call. The
 * close of an issue whose task's own label write was still waiting names labels that write then took off.
 */
export const removeLabelPerformer: Performer<"remove-label"> = {
  async perform({ effect, github, seen }, p) {
    const known = (await seen?.labels(effect.repo, p.issue)) ?? null;
    if (known && !lower(known).has(p.label.toLowerCase()))
      return done(undefined, "the issue's last delivery or label write shows it without the label");
    await github.removeLabel(repoRef(effect.repo), p.issue, p.label);
    if (known)
      await seen?.sawLabels(
        effect.repo,
        p.issue,
        known.filter((l) => l.toLowerCase() !== p.label.toLowerCase()),
      );
    return done();
  },
};

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
