/**
 * RE2 (re2-wasm, 16 MB of WebAssembly memory) is loaded when a repository pattern is first compiled, not when the
 * service's modules are: a child process imports the built service and reports whether re2-wasm is among the loaded
 * modules, before and after one pattern.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const dist = (path: string) => fileURLToPath(new URL(`../../dist/src/${path}`, import.meta.url));

test("the service's modules load without RE2; the first repository pattern loads it", () => {
  const script = `
    import { createRequire } from "node:module";
    await import(${JSON.stringify(dist("app/index.js"))});
    const patterns = await import(${JSON.stringify(dist("outcomes/repository-patterns.js"))});
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("re2-wasm"));
    const before = loaded();
    const problem = patterns.repositoryPatternProblem("runner (lost|gone)");
    process.stdout.write(JSON.stringify({ before, problem, after: loaded() }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(JSON.parse(run.stdout)).toEqual({ before: false, problem: null, after: true });
});
