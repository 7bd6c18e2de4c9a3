/**
 * The Prisma query compiler's WebAssembly, compiled from its file. The
 * generated client imports it as an ES module that exports the module as one
 * base64 string (2.5 MB). A module is never unloaded, so its source and that
 * string (about 5 MB of heap between them) stayed resident for the life of
 * the process, after the one compile that needed them. Here the same file is
 * read and decoded once, and both are garbage when the compile returns.
 *
 * The client is handed this through its `__internal.configOverride` option,
 * which the generated client's options type does not name (clientOptions
 * below); test/store/compiler-wasm.test.ts fails if a Prisma upgrade stops
 * calling it. If the file is not in the shape read here (another Prisma
 * version), the client's own loader is used: it costs the memory, not the
 * service.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";

/** The providers of store/db.ts (not imported from there: db.ts imports this file). */
type Provider = "sqlite" | "postgresql";

/** Only what is used here: the service's TypeScript library has no WebAssembly types. */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object };

/** The parts of the generated client's config this replaces (see GetPrismaClientConfig). */
interface CompilerWasm {
  getRuntime: () => Promise<unknown>;
  getQueryCompilerWasmModule: () => Promise<unknown>;
}

interface ClientConfig {
  compilerWasm?: CompilerWasm;
}

const SHAPE = /^const wasm = "([A-Za-z0-9+/]*={0,2})";\s*export \{ wasm \}\s*$/;

/** The base64 module the generated client imports for a provider. */
export function compilerModuleFile(provider: Provider): string {
  return fileURLToPath(import.meta.resolve(`@prisma/client/runtime/query_compiler_bg.${provider}.wasm-base64.mjs`));
}

/** The WebAssembly bytes in a base64 module's source, or null when it is not in the expected shape. */
export function wasmBytes(source: string): Buffer | null {
  const match = SHAPE.exec(source);
  return match ? Buffer.from(match[1]!, "base64") : null;
}

/**
 * A `configOverride` for the generated client: the same config, its query
 * compiler compiled from the file instead of imported.
 */
export function compilerFromFile<C extends ClientConfig>(
  provider: Provider,
  file = compilerModuleFile(provider),
): (config: C) => C {
  return (config) => {
    const own = config.compilerWasm;
    if (!own) return config;
    const compilerWasm: CompilerWasm = {
      getRuntime: own.getRuntime,
      getQueryCompilerWasmModule: async () => {
        const bytes = wasmBytes(await readFile(file, "latin1"));
        return bytes ? new WebAssembly.Module(bytes) : own.getQueryCompilerWasmModule();
      },
    };
    return { ...config, compilerWasm };
  };
}

/**
 * The options both generated clients are constructed with: the adapter, and
 * the query compiler compiled from its file. The return type names only the
 * adapter because the generated options type refuses any other key; the
 * object built first and returned whole keeps `__internal` in it.
 */
export function clientOptions(
  provider: Provider,
  adapter: SqlDriverAdapterFactory,
): { adapter: SqlDriverAdapterFactory } {
  const options = { adapter, __internal: { configOverride: compilerFromFile(provider) } };
  return options;
}
