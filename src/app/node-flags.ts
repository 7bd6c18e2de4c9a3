/**
 * The Node.js options the service runs with. `npm start`, the Docker image,
 * the demo and the benchmarks all start it with them
 * (test/app/node-flags.test.ts holds package.json and the Dockerfile to this
 * list). Started without them, the service works the same and keeps more
 * memory resident.
 *
 * - `--max-semi-space-size=4`: V8 lets the young generation grow to 16 MB per
 *   semi-space, and under a steady stream of webhooks it does and stays
 *   there, although almost nothing in it survives a scavenge (a delivery's
 *   parsed body lives for one request).
 * - `--liftoff-only`: WebAssembly (the Prisma query compiler, RE2 once a
 *   repository names a pattern) runs as V8's baseline code; optimising the
 *   query compiler kept about 20 MB more resident.
 *
 * Together, under 500 deliveries/s: 152.5 MB resident instead of 189–197 MB,
 * for somewhat more CPU per delivery (bench/README.md, `bench:ingest`); with
 * the query compiler read from its file as well (store/compiler-wasm.ts),
 * 147–147.5 MB.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--liftoff-only"];
