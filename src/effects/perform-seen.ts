/**
 * The two performers that start from what GitHub already said (effects/seen.ts) instead of reading it again.
 *
 * A label effect whose label the issue's last delivery already shows, with none of the others, is done
 * without a call. One that adds a label the issue did not carry adds it straight away: GitHub's answer is the
 * issue's labels now, fresh evidence for which others to remove. A removal starts from the labels last seen, and
 * each removal's answer is the issue's labels after it, the evidence for the next; the labels are read first only
 * when nothing was seen, and again when GitHub says a label the last delivery showed is not there.
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

    // What GitHub said last, and whether it said it in answer to this performance's own call.
    let now: string[] | null = known;
    let fresh = false;
    let added: string | null = null;
    const read = async (): Promise<string[] | null> => {
      const have = await github.issueLabels(r, p.issue);
      if (have === null) return null;
      fresh = true;
      if (p.label === null || lower(have).has(wanted!)) return have;
      added = p.label;
      return github.addLabels(r, p.issue, [p.label]);
    };
    if (p.label !== null && known && !lower(known).has(wanted!)) {
      try {
        now = await github.addLabels(r, p.issue, [p.label]);
        added = p.label;
        fresh = true;
      } catch (err) {
        if (!gone(err)) throw err;
        now = null;
      }
    }
    if (now === null) now = await read();
    if (now === null) return dropped(`issue #${p.issue} no longer exists`);
    const stale = staleIn(now);
    if (added !== null && stale.length > 0 && laneBusy) {
      // The label that tells who owns the issue is on; the ones it replaces wait behind the other claims' own.
      await seen?.sawLabels(effect.repo, p.issue, now);
      return later(`added ${added}; ${stale.join(", ")} removed behind the other ownership writes`);
    }
    // Each removal answers the issue's labels after it: the evidence for the next one. A label the last delivery
    // showed that GitHub says is not there means that delivery is out of date: the labels are read.
    const removed: string[] = [];
    const tried = new Set<string>();
    for (;;) {
      const l: string | undefined = staleIn(now).find((x) => !tried.has(x.toLowerCase()));
      if (l === undefined) break;
      tried.add(l.toLowerCase());
      const after = await github.removeLabel(r, p.issue, l);
      if (after !== null) {
        [now, fresh] = [after, true];
        removed.push(l);
      } else if (fresh) now = now.filter((x): boolean => x.toLowerCase() !== l.toLowerCase());
      else if ((now = await read()) === null) return dropped(`issue #${p.issue} no longer exists`);
    }
    await seen?.sawLabels(effect.repo, p.issue, now);
    return done({ added, removed });
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
    const after = await github.removeLabel(repoRef(effect.repo), p.issue, p.label);
    if (after !== null) await seen?.sawLabels(effect.repo, p.issue, after);
    else if (known)
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
