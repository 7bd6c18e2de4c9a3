/**
 * What the worker says on the terminal: one line per run and step
 * (`acme/app#12  claimed  …`), or with --json one JSON object per line for
 * machines. Heartbeats are debug lines (--verbose). Failures say what
 * happened and what to do, and go to stderr in the human form.
 */
export type Level = "debug" | "info" | "error";

export interface RunRef {
  repo: string;
  issue: number;
  runId: string;
}

export interface Reporter {
  /** One step of one run (or of the worker itself when `run` is null). */
  step(run: RunRef | null, step: string, text: string, fields?: Record<string, unknown>, level?: Level): void;
}

export function reporter(opts: {
  json: boolean;
  verbose: boolean;
  out: (line: string) => void;
  err: (line: string) => void;
  now?: () => Date;
}): Reporter {
  const now = opts.now ?? (() => new Date());
  return {
    step(run, step, text, fields = {}, level = "info") {
      if (level === "debug" && !opts.verbose) return;
      if (opts.json) {
        const line = {
          at: now().toISOString(),
          level,
          event: step,
          ...(run ? { repo: run.repo, issue: run.issue, run: run.runId } : {}),
          message: text,
          ...fields,
        };
        opts.out(`${JSON.stringify(line)}\n`);
        return;
      }
      const who = run ? `${run.repo}#${run.issue}` : "worker";
      const line = `${now()
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z")}  ${who}  ${step}${text ? `  ${text}` : ""}\n`;
      (level === "error" ? opts.err : opts.out)(line);
    },
  };
}
