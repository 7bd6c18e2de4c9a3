// ESLint: type-checked rules for TypeScript, Prettier owns formatting.
// A rule is changed here with a reason, never silenced inline (inline configuration is off).
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "data/",
      "coverage/",
      "artifacts/",
      "bench/results/",
      "src/store/generated/",
      "prisma/**/migrations/",
    ],
  },
  {
    linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: "error" },
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["prisma/*/prisma.config.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" },
      ],
      // The machine's events, states and effects are unions: a switch over one must name every member, so a new
      // member cannot fall through a default unnoticed.
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      // Texts and logs are checked for control characters on purpose (sanitising what GitHub or a worker sent).
      "no-control-regex": "off",
    },
  },
  {
    files: ["src/**/*.ts"],
    plugins: { "@stylistic": stylistic },
    rules: {
      // Prettier wraps code at 120 but leaves long strings and comments; in src/ they are split too.
      "@stylistic/max-len": ["error", { code: 120 }],
      // Only apply/ writes task and run rows: every other write path would bypass the machine's fenced apply.
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.property.name=/^(create|createMany|update|updateMany|upsert|delete|deleteMany)$/][callee.object.property.name=/^(task|run)$/]",
          message: "Task and run rows are written only by src/apply (the machine's fenced apply).",
        },
      ],
    },
  },
  {
    files: ["src/apply/**/*.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/**/queries.ts", "src/**/queries/*.ts", "src/store/**", "src/apply/**"],
    rules: {
      // Each room owns its queries: the Prisma client (`Db`) is used in the room's queries.ts (and in its queries/,
      // where queries.ts is composed of one module per reader), in store/ and in apply/ (the writer of task and run
      // rows); the rest of a room takes its queries' interface.
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/store/db.js"],
              importNames: ["Db"],
              message: "Take the room's queries (its queries.ts) instead of the whole Prisma client.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts"],
    rules: {
      // Tests and benchmarks read JSON from GitHub's examples, the fake and HTTP answers without a schema for each;
      // the unsafe-any rules would demand a cast on every line of an assertion.
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off",
      // Fake GitHub handlers and test doubles implement async interfaces without awaiting anything.
      "@typescript-eslint/require-await": "off",
      // The fake GitHub echoes request values in its messages the way GitHub does, whatever JSON type they have.
      "@typescript-eslint/no-base-to-string": "off",
      "@typescript-eslint/restrict-template-expressions": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: "readonly",
        console: "readonly",
        URL: "readonly",
        module: "writable",
        require: "readonly",
        __dirname: "readonly",
      },
    },
  },
);
