/**
 * The Prisma query compiler is compiled from its file (src/store/compiler-wasm.ts), not imported as the module
 * whose 2.5 MB base64 string would stay in the heap for the life of the process. A child process records every
 * module it loads: the service's clients must query without loading the base64 module, and a client
 * constructed the generated way, in the same process, loads it (so the recording can see it).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compilerFromFile, compilerModuleFile, wasmBytes } from "../../src/store/compiler-wasm.js";
import { onceForAll, providers } from "../support/databases.js";
import type { Provider } from "../../src/store/db.js";

const dist = (path: string) => fileURLToPath(new URL(`../../dist/src/${path}`, import.meta.url));
const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

/** A load hook: a module is loaded only when it is imported (resolving its name, as compiler-wasm.ts does, is not). */
const RECORDER = `export async function load(url, context, next) {
  if (url.includes("wasm-base64")) (await import("node:fs")).writeSync(1, "loaded " + url + "\\n");
  return next(url, context);
}`;

/**
 * Runs one query through the service's client (openDatabase), or through a client of the generated module
 * constructed the generated way. A process compiles the query compiler once (the runtime keeps it per provider),
 * so each gets a process of its own.
 */
function childScript(provider: Provider, url: string, client: "service" | "generated"): string {
  return `
    import { register } from "node:module";
    register("data:text/javascript," + encodeURIComponent(${JSON.stringify(RECORDER)}));
    let db;
    if (${JSON.stringify(client)} === "service") {
      const { openDatabase } = await import(${JSON.stringify(dist("store/db.js"))});
      db = (await openDatabase(${JSON.stringify(url)})).db;
    } else {
      const { PrismaClient } = await import(${JSON.stringify(dist(`store/generated/${provider}/client.js`))});
      const adapter = ${JSON.stringify(provider)} === "sqlite"
        ? new (await import("@prisma/adapter-better-sqlite3")).PrismaBetterSQLite3({ url: ":memory:" })
        : new (await import("@prisma/adapter-pg")).PrismaPg({ connectionString: ${JSON.stringify(url)} });
      db = new PrismaClient({ adapter });
    }
    await db.$queryRawUnsafe("SELECT 1");
    process.stdout.write(${JSON.stringify(client)} + " client queried\\n");
    await db.$disconnect();
  `;
}

function run(provider: Provider, client: "service" | "generated"): string[] {
  const child = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", childScript(provider, urls[provider]!, client)],
    {
      encoding: "utf8",
    },
  );
  expect(child.stderr).toBe("");
  return child.stdout.trim().split("\n");
}

const urls: Record<Provider, string | undefined> = {
  sqlite: "file::memory:",
  postgresql: process.env["TEST_DATABASE_URL"],
};

describe.each(providers)("the query compiler on %s", (provider) => {
  test("the service's client queries without loading the base64 module", () => {
    expect(run(provider, "service")).toEqual(["service client queried"]);
  });

  onceForAll(provider)("a client constructed the generated way loads it (what the recording would see)", () => {
    expect(run(provider, "generated")).toEqual([
      `loaded file://${compilerModuleFile(provider)}`,
      "generated client queried",
    ]);
  });
});

describe("reading the query compiler's file", () => {
  test.each(["sqlite", "postgresql"] as const)("the installed %s module is in the shape read", (provider) => {
    const bytes = wasmBytes(readFileSync(compilerModuleFile(provider), "latin1"));
    expect([...bytes!.subarray(0, 4)]).toEqual(WASM_MAGIC);
  });

  test.each([
    ["the shape read", 'const wasm = "AGFzbQ==";\nexport { wasm }\n', WASM_MAGIC],
    ["another variable name", 'const bytes = "AGFzbQ==";\nexport { bytes }\n', null],
    ["a CommonJS module", 'module.exports = { wasm: "AGFzbQ==" }\n', null],
    ["characters outside base64", 'const wasm = "AGF\\"zbQ==";\nexport { wasm }\n', null],
    ["more after the export", 'const wasm = "AGFzbQ==";\nexport { wasm }\nexport const other = 1;\n', null],
  ])("%s", (_, source, bytes) => {
    const read = wasmBytes(source);
    expect(read ? [...read] : null).toEqual(bytes);
  });

  test("a file in another shape falls back to the client's own loader; a config without one is left as it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "compiler-wasm-"));
    try {
      const file = join(dir, "other.mjs");
      writeFileSync(file, "export const wasm = 1;\n");
      const own = {
        getRuntime: () => Promise.resolve("runtime"),
        getQueryCompilerWasmModule: () => Promise.resolve("own"),
      };
      const config = compilerFromFile("sqlite", file)({ compilerWasm: own });
      expect(await config.compilerWasm!.getQueryCompilerWasmModule()).toBe("own");
      expect(await config.compilerWasm!.getRuntime()).toBe("runtime");
      const none = {};
      expect(compilerFromFile("sqlite", file)(none)).toBe(none);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
