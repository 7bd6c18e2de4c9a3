// The worker benchmark's options and usage text.
import { parseArgs } from "node:util";
import { integerOption, UsageError } from "../claims/options.js";

export const USAGE = `Usage: npm run bench:worker -- [options]

  --runs N          measured runs of each kind (default 10); the worker's first
                    run clones its mirror (cold), the others fetch into it (warm)
  --commits N       commits on the repository's default branch (default 5000)
  --files N         files in its tree (default 300)
  --file-kb N       mean file size in KB (default 4)
  --touch N         files each commit of the history changes (default 2)
  --target X        the warm worker's git overhead must be at most X times the
                    baseline (default 0.5)
  --strict          exit 1 when the target is missed
  --max-minutes N   hard limit for the whole run (default 20)
`;

export interface Options {
  runs: number;
  commits: number;
  files: number;
  fileKb: number;
  touch: number;
  target: number;
  strict: boolean;
  maxMinutes: number;
}

export function parseOptions(argv: string[]): Options {
  const str = (d: string) => ({ type: "string" as const, default: d });
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      runs: str("10"),
      commits: str("5000"),
      files: str("300"),
      "file-kb": str("4"),
      touch: str("2"),
      target: str("0.5"),
      strict: { type: "boolean" },
      "max-minutes": str("20"),
      help: { type: "boolean" },
    },
  });
  if (v.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const num = (name: string, min: number): number => integerOption(v, name, min);
  const target = Number(v.target);
  if (!Number.isFinite(target) || target <= 0) throw new UsageError(`--target must be a number > 0, got ${v.target}`);
  const o: Options = {
    runs: num("runs", 2),
    commits: num("commits", 2),
    files: num("files", 1),
    fileKb: num("file-kb", 1),
    touch: num("touch", 1),
    target,
    strict: Boolean(v.strict),
    maxMinutes: num("max-minutes", 1),
  };
  if (o.touch > o.files) throw new UsageError(`--touch ${o.touch} is more than --files ${o.files}`);
  if (o.files > 2000) throw new UsageError("--files must be at most 2000");
  return o;
}
