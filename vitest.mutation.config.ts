// Vitest configuration for the mutation run (stryker.config.json): only the suites that exercise the
// money path, on the memory storage (TEST_STORAGES=memory is set by the Stryker config's env).
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: [
      "test/suites/money-boundaries.test.ts",
      "test/suites/money-details.test.ts",
      "test/suites/ledger.test.ts",
      "test/suites/settlement.test.ts",
      "test/suites/commerce.test.ts",
      "test/suites/owner-promises.test.ts",
      "test/model/*.test.ts"
    ],
    env: { TEST_STORAGES: "memory", MODEL_RUNS: "40" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
