/**
 * Label swaps of several effects, performed at once in one installation, sent to GitHub as one mutation: one
 * write slot of the installation's pace for all of them. A claim's interlock label then waits for the writes of
 * its lane ahead of it by the batch, not one by one (effects/executor.ts claims the batch).
 *
 * Each effect of the batch is a member. A member's swap waits until every member has asked for its own or
 * finished without one; then the swaps go out together, and each member gets its own answer. Nothing waits on
 * a clock: a member that never swaps says so by finishing.
 */
import type { CallCounts } from "../github/instrument.js";
import { GitHubError, type LabelSwap, type SwapAnswer } from "../github/port.js";

export interface SwapMember {
  /** This member's swap, answered when the batch has been sent. */
  swap(s: LabelSwap): Promise<SwapAnswer>;
  /** The member is done (with or without a swap); called once it has finished, more than once is harmless. */
  done(): void;
  /** What `fn` answers, asked once for the whole batch under `key` (a label's id the members all need). */
  shared: <T>(key: string, fn: () => Promise<T>) => Promise<T>;
}

interface Waiting {
  swap: LabelSwap;
  resolve: (a: SwapAnswer) => void;
  reject: (err: unknown) => void;
}

export class SwapBatch {
  #undecided: number;
  #waiting: Waiting[] = [];
  #sent = false;
  readonly #shared = new Map<string, Promise<unknown>>();

  /** `send` makes one request of the swaps (paced as one write) and answers each in order. */
  constructor(
    members: number,
    private readonly send: (swaps: LabelSwap[]) => Promise<SwapAnswer[]>,
  ) {
    this.#undecided = members;
  }

  member(): SwapMember {
    let decided = false;
    const decide = () => {
      if (decided) return false;
      decided = true;
      this.#undecided--;
      return true;
    };
    return {
      swap: (s) => {
        // A second swap of one member, or one after the batch went out: on its own.
        if (!decide() || this.#sent) return this.send([s]).then((a) => a[0]!);
        const answer = new Promise<SwapAnswer>((resolve, reject) => this.#waiting.push({ swap: s, resolve, reject }));
        this.#flush();
        return answer;
      },
      done: () => {
        if (decide()) this.#flush();
      },
      shared: <T>(key: string, fn: () => Promise<T>): Promise<T> => {
        if (!this.#shared.has(key)) this.#shared.set(key, fn());
        return this.#shared.get(key) as Promise<T>;
      },
    };
  }

  #flush(): void {
    if (this.#undecided > 0 || this.#sent || this.#waiting.length === 0) return;
    this.#sent = true;
    const waiting = this.#waiting;
    this.send(waiting.map((w) => w.swap)).then(
      (answers) => waiting.forEach((w, i) => w.resolve(answers[i]!)),
      (err: unknown) => waiting.forEach((w) => w.reject(err)),
    );
  }
}

/** A batch member's swap, counted as this effect's write: a refusal or a lost answer may have done half of it. */
export function sendWith(member: SwapMember, counts: CallCounts): (s: LabelSwap) => Promise<SwapAnswer> {
  return async (s) => {
    counts.writes++;
    try {
      const answer = await member.swap(s);
      if (answer instanceof GitHubError) counts.writeFailed = true;
      return answer;
    } catch (err) {
      counts.writeFailed = true;
      throw err;
    }
  };
}
