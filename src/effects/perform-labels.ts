/**
 * The label performers: they start from what GitHub already said (effects/seen.ts) instead of reading it again.
 *
 * A label effect whose label the issue's last delivery already shows, with none of the others, is done without a
 * call. A swap (a label to add, others to take off) whose issue and labels GitHub has named by their node ids
 * (in webhooks, or in the answers to earlier label writes) is one GraphQL mutation: the label added first, the
 * others removed after it, and the issue's labels after both in the answer.
 *
 * Otherwise it goes by name over REST. One that adds a label the issue did not carry adds it straight away:
 * GitHub's answer is the issue's labels now, fresh evidence for which others to remove. A removal starts from the
 * labels last seen, and each removal's answer is the issue's labels after it, the evidence for the next; the
 * labels are read first only when nothing was seen, and again when GitHub says a label the last delivery showed
 * is not there.
 *
 * A label removal the issue was last seen without is done without a call.
 */
import { GitHubError, repoRef, type GitHub, type IssueLabel, type LabelSwap, type SwapAnswer } from "../github/port.js";
import {
  done,
  dropped,
  later,
  type PerformContext,
  type Performed,
  type Performer,
  type SwapSender,
} from "./performed.js";
import type { NodeIds, Seen } from "./seen.js";

type Said = ReadonlyArray<string | IssueLabel>;

const nameOf = (l: string | IssueLabel): string => (typeof l === "string" ? l : l.name);
const lower = (xs: Said) => new Set(xs.map((x) => nameOf(x).toLowerCase()));

/** GitHub's answer that the issue is not there (or not any more): the read decides what that means. */
const gone = (err: unknown) => err instanceof GitHubError && (err.status === 404 || err.status === 410);

interface Swap {
  repo: string;
  issue: number;
  add: string;
  remove: string[];
}

/**
 * The node ids a swap names. A label whose id no delivery or answer gave (the interlock, before it was first on
 * an issue of the repository) is read once for the repository, when the issue's own id is known: a read is not
 * paced, and a swap then needs no write by name first. A label the repository does not have stays unknown: the
 * write by name makes it (and its answer names its id). Effects performed together ask once between them.
 */
async function labelIds(github: GitHub, seen: Seen, s: Swap, once: Once): Promise<NodeIds> {
  const names = [s.add, ...s.remove];
  const ids = await seen.nodeIds(s.repo, s.issue, names);
  const missing = names.filter((l) => !ids.labels.has(l.toLowerCase()));
  if (!ids.issue || missing.length === 0) return ids;
  const r = repoRef(s.repo);
  const named = async (name: string): Promise<IssueLabel | null> => (await github.findLabels(r, [name]))[0] ?? null;
  const found = (
    await Promise.all(missing.map((name) => once(`label ${s.repo} ${name.toLowerCase()}`, () => named(name))))
  ).filter((l): l is IssueLabel => l !== null);
  if (found.length === 0) return ids;
  await seen.sawLabelIds(s.repo, found);
  return {
    issue: ids.issue,
    labels: new Map([...ids.labels, ...found.map((l) => [l.name.toLowerCase(), l.nodeId] as const)]),
  };
}

type Once = NonNullable<PerformContext["shared"]>;
const alone: Once = (_key, fn) => fn();

/**
 * The swap as one mutation, when the issue and every label in it have known node ids: GitHub's labels after it;
 * "unsent" when an id is not known; null when GitHub said a node is not there (the ids are then forgotten, and
 * whatever half was done is found by the read that follows).
 *
 * A host that refuses the mutation (GitHub's errors other than NOT_FOUND) has the swap made by name as well.
 *
 * An id that names another label than thought (one renamed on GitHub since) shows in the answer under its new
 * name: the ids are forgotten, and that label, which the swap put on the issue, comes off again by name.
 */
async function swapByIds(
  github: GitHub,
  { send, once }: { send: SwapSender; once: Once },
  seen: Seen,
  s: Swap,
  before: Said,
): Promise<Said | null | "unsent"> {
  const ids = await labelIds(github, seen, s, once);
  const idOf = (l: string) => ids.labels.get(l.toLowerCase());
  const add = idOf(s.add);
  const remove = s.remove.map(idOf);
  if (!ids.issue || !add || remove.some((x) => x === undefined)) return "unsent";
  let after: SwapAnswer;
  try {
    after = await send({ issueId: ids.issue, add: [add], remove: remove as string[] });
  } catch (err) {
    if (!(err instanceof GitHubError)) throw err;
    after = err;
  }
  if (after instanceof GitHubError) {
    // A host that refuses the mutation itself (a release without it), or this swap of it: by name, as before it.
    if (after.graphqlErrors) return "unsent";
    throw after;
  }
  if (after === null) {
    await seen.forgetNodeIds(s.repo, s.issue, [s.add, ...s.remove]);
    return null;
  }
  const put = after.find((l) => l.nodeId === add);
  if (put === undefined || put.name.toLowerCase() === s.add.toLowerCase()) return after;
  await seen.forgetNodeIds(s.repo, s.issue, [s.add, ...s.remove]);
  if (lower(before).has(put.name.toLowerCase())) return after;
  return (await github.removeLabel(repoRef(s.repo), s.issue, put.name)) ?? after.filter((l) => l !== put);
}

export const labelPerformer: Performer<"label"> = {
  async perform({ effect, task, github, seen, laneBusy, swap: sendSwap, shared }, p): Promise<Performed> {
    if (task && task.label !== p.label) return dropped(`superseded: the task now shows ${task.label ?? "no label"}`);
    const r = repoRef(effect.repo);
    const wanted = p.label?.toLowerCase() ?? null;
    const staleIn = (labels: Said) => {
      const present = lower(labels);
      return p.others.filter((l) => present.has(l.toLowerCase()) && l.toLowerCase() !== wanted);
    };
    const known = (await seen?.labels(effect.repo, p.issue)) ?? null;
    if (known && (wanted === null || lower(known).has(wanted)) && staleIn(known).length === 0)
      return done({ added: null, removed: [] }, "the issue's last delivery shows these labels already");

    // What GitHub said last, and whether it said it in answer to this performance's own call.
    let now: Said | null = known;
    let fresh = false;
    let added: string | null = null;
    const removed: string[] = [];
    if (seen && known && p.label !== null && !lower(known).has(wanted!) && staleIn(known).length > 0) {
      const remove = staleIn(known);
      const swap = { repo: effect.repo, issue: p.issue, add: p.label, remove };
      const send = sendSwap ?? ((x: LabelSwap) => github.swapLabels([x]).then((a) => a[0]!));
      const after = await swapByIds(github, { send, once: shared ?? alone }, seen, swap, known);
      if (after === null) now = null;
      else if (after !== "unsent") {
        [now, fresh] = [after, true];
        removed.push(...remove.filter((l) => !lower(after).has(l.toLowerCase())));
        // Not on after all (its id named another label): added by name below.
        if (lower(after).has(wanted!)) added = p.label;
      }
    }
    const read = async (): Promise<Said | null> => {
      const have = await github.issueLabels(r, p.issue);
      if (have === null) return null;
      fresh = true;
      if (p.label === null || lower(have).has(wanted!)) return have;
      added = p.label;
      return github.addLabels(r, p.issue, [p.label]);
    };
    if (p.label !== null && now && !lower(now).has(wanted!)) {
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
    const tried = new Set<string>();
    for (;;) {
      const l: string | undefined = staleIn(now).find((x) => !tried.has(x.toLowerCase()));
      if (l === undefined) break;
      tried.add(l.toLowerCase());
      const after = await github.removeLabel(r, p.issue, l);
      if (after !== null) {
        [now, fresh] = [after, true];
        removed.push(l);
      } else if (fresh) now = now.filter((x) => nameOf(x).toLowerCase() !== l.toLowerCase());
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
