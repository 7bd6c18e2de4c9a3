/** Jest on native ESM: run through `node --experimental-vm-modules` (npm test does). */
export default {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  // A `*.pg.*` test needs PostgreSQL throughout (several processes on one database): without TEST_DATABASE_URL it is
  // left out, and the global setup says the PostgreSQL suites were skipped.
  testPathIgnorePatterns: [
    "/node_modules/",
    ...(process.env["TEST_DATABASE_URL"] ? [] : ["\\.pg\\.[^/]*\\.test\\.ts$"]),
  ],
  // One line on stderr when TEST_DATABASE_URL is unset: the PostgreSQL suites are skipped, not passed.
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      {
        jsc: { parser: { syntax: "typescript" }, target: "es2022" },
        module: { type: "es6" },
      },
    ],
  },
  // A guard against a hang, not a measure of speed: on a 2-core machine with both cores busy, a test that starts a
  // dozen CLI processes or an App and a browser takes over a minute, and it must still pass.
  testTimeout: 120000,
  maxWorkers: 2,
};
