// Mutation testing of the money path (docs/testing.md): `npm run test:mutation` runs the model's
// planted bugs first (test/model/mutants.ts: each must make the model suite fail), then this. Mutates the
// settlement writer, ledger, wallet and policies, idempotency, the 85/15 split and the memory stores
// behind them; runs only the money suites on the memory storage (vitest.mutation.config.ts), with
// per-test coverage so each mutant runs just the tests that reach it. Incremental: the result file
// (git-ignored under reports/) lets a second run re-test only mutants whose code or tests changed.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  coverageAnalysis: "perTest",
  // Stryker rewrites tsconfig.json with the TypeScript JS API, which TypeScript 7 (native) no longer
  // ships; vitest does not read tsconfig paths here, so point it at a file that does not exist.
  tsconfigFile: "tsconfig.stryker-none.json",
  mutate: [
    "src/services/purchases/Settlement.ts",
    "src/services/ledger/Ledger.ts",
    "src/services/wallet/Wallet.ts",
    "src/services/wallet/funding.ts",
    "src/schema/wallet/policy.ts",
    "src/services/idempotency/Idempotency.ts",
    "src/schema/ledger/ledger.ts",
    "src/layers/ledger/LedgerStore.memory.ts",
    "src/layers/idempotency/IdempotencyStore.memory.ts",
    "src/layers/purchases/SettlementStore.memory.ts",
    // The wallet's store (held escrow, running spend totals and their drift check) and the one
    // writer of the spend totals it shares with the commerce store (addSpend). The range is
    // addSpend's lines: re-check it whenever commerceTables.ts changes.
    "src/layers/wallet/WalletStore.memory.ts",
    "src/layers/storage/memory/commerceTables.ts:121-125",
    // The purchase: its records (the offer snapshot, the transaction, the order), the one lifecycle
    // every way of buying shares, and an order's answer or deadline settling or refunding it (for a
    // buy's and a paid call's order; a saga's only records).
    "src/services/purchases/records.ts",
    "src/services/purchases/Purchases.ts",
    "src/services/purchases/Orders.ts"
  ],
  // Code run while modules load or layers are built (beforeAll) is "static": such a mutant runs the
  // whole (small, ~5 s) mutation suite rather than being credited to one test.
  ignoreStatic: false,
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  // A shared 2-core machine: two test workers at most (`npm run test:mutation -- --concurrency 4` elsewhere).
  concurrency: 2,
  timeoutMS: 60_000,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp"
}
