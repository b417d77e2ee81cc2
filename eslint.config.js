// @ts-check
import tseslint from "typescript-eslint";

/** Modules that perform I/O, read the clock or the environment: forbidden in src/core. */
const ioModules = [
  "node:*",
  "fs",
  "fs/*",
  "path",
  "http",
  "https",
  "net",
  "os",
  "child_process",
  "crypto",
  "events",
  "stream",
  "timers",
  "process",
  "url",
  "express",
  "prom-client",
  "prometheus-query",
  "@kubernetes/*",
  "nock",
  "**/adapters/**",
  "**/app/**",
  "**/cli/**",
  "**/telemetry/**",
  "**/logger*",
];

export default tseslint.config(
  {
    ignores: [
      ".cache/**",
      "dist/**",
      "node_modules/**",
      "charts/**",
      "coverage/**",
      "tools/kube-bin/**",
      "eslint.config.js",
    ],
  },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
    },
  },
  {
    // Phases stay small enough to read: a longer function is a phase that should be split. The same
    // limits hold for everything the image ships around the core: the app, its adapters, commands,
    // dashboards and the simulator.
    files: ["src/**/*.ts"],
    rules: {
      "max-lines-per-function": ["error", { max: 120, skipBlankLines: true, skipComments: true }],
      complexity: ["error", { max: 20 }],
    },
  },
  {
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: ioModules.map((group) => ({
            group: [group],
            message: "src/core is pure: no I/O, clock or environment",
          })),
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "process", message: "src/core never reads the environment; pass values in" },
        { name: "fetch", message: "src/core does no I/O" },
        { name: "setTimeout", message: "src/core has no timers; time is an argument" },
        { name: "setInterval", message: "src/core has no timers; time is an argument" },
        { name: "console", message: "src/core does not log; return reasons instead" },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "src/core never reads the clock; take `now` as an argument" },
        { object: "Math", property: "random", message: "src/core is deterministic" },
        { object: "performance", property: "now", message: "src/core never reads the clock" },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "src/core never reads the clock; take `now` as an argument",
        },
      ],
    },
  },
);
