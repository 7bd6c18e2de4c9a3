/**
 * The service's Node.js options live in one list (src/app/node-flags.ts) that the demo and the benchmarks import;
 * `npm start` and the Docker image's command spell them out and must say the same.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { SERVICE_NODE_FLAGS } from "../../src/app/node-flags.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

test("npm start runs the service with the service's Node.js options", () => {
  const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
  expect(pkg.scripts["start"]).toBe(["node", ...SERVICE_NODE_FLAGS, "dist/src/main.js"].join(" "));
});

test("the Docker image's command runs the service with the same options", () => {
  const cmd = read("Dockerfile")
    .split("\n")
    .filter((line) => line.startsWith("CMD "))
    .at(-1);
  expect(cmd).toBeDefined();
  expect(JSON.parse(cmd!.slice("CMD ".length))).toEqual(["node", ...SERVICE_NODE_FLAGS, "dist/src/main.js"]);
});

test("this Node.js accepts the options (an unknown V8 option stops node before it runs anything)", () => {
  const run = spawnSync(process.execPath, [...SERVICE_NODE_FLAGS, "-e", "process.stdout.write('ran')"], {
    encoding: "utf8",
  });
  expect(run.stderr).toBe("");
  expect(run.stdout).toBe("ran");
  expect(run.status).toBe(0);
});

test("an option node does not know is refused that way: the test above can fail", () => {
  const run = spawnSync(process.execPath, ["--no-such-v8-option-here", "-e", "0"], { encoding: "utf8" });
  expect(run.status).not.toBe(0);
  expect(run.stderr).toMatch(/bad option/);
});
