/**
 * A strict reader of Prometheus' text exposition format for the metrics
 * tests: every line must be `# HELP`, `# TYPE`, or a sample of a declared
 * family; anything else throws with the line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?[0-9]+)?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/;

function value(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  // The format takes a value as Go's ParseFloat does, which reads NaN in any case; prom-client writes a
  // gauge that has no samples yet (the event loop's lag right after start) as "Nan".
  if (/^nan$/i.test(text)) return NaN;
  if (!/^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(text))
    throw new Error(`not a sample value: ${JSON.stringify(line)}`);
  return Number(text);
}

function labels(text: string | undefined, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  let rest = text ?? "";
  while (rest.length > 0) {
    const m = LABEL.exec(rest);
    if (!m) throw new Error(`bad labels in ${JSON.stringify(line)}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    rest = rest.slice(m[0].length);
  }
  return out;
}

export function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("# HELP ")) {
      if (!HELP.test(line)) throw new Error(`bad HELP line: ${JSON.stringify(line)}`);
      continue;
    }
    const t = TYPE.exec(line);
    if (t) {
      types.set(t[1]!, t[2]!);
      continue;
    }
    const s = SAMPLE.exec(line);
    if (!s) throw new Error(`not exposition format: ${JSON.stringify(line)}`);
    const name = s[1]!;
    const family = [name, name.replace(/_(bucket|sum|count)$/, "")].find((n) => types.has(n));
    if (!family) throw new Error(`sample of an undeclared family: ${JSON.stringify(line)}`);
    if (family !== name && !["histogram", "summary"].includes(types.get(family)!))
      throw new Error(`suffixed sample of a ${types.get(family)}: ${JSON.stringify(line)}`);
    samples.push({ name, labels: labels(s[2], line), value: value(s[3]!, line) });
  }
  return { types, samples };
}

/** The value of the one sample named `name` whose labels include `match` (0 when there is none). */
export function valueOf(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(match)}`);
  return found[0]?.value ?? 0;
}

/** The sum of the samples named `name` whose labels include `match`. */
export function sumOf(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}
