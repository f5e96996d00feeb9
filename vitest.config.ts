// Vitest configuration: test files under test/, generous timeouts for the Postgres-backed suites.
// How the run is organised and what it costs: docs/testing.md ("How `npm test` runs").
import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import LongestFirst from "./test/setup/sequencer.js"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Two files share the two cores, and other work may share the machine: a bound only tells a hang
    // from an answer (docs/testing.md), so it is generous.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One worker more than there are cores, at least three (vitest's default, cores - 1, ran 1 on two
    // cores), each kept for many files: the module graph (Effect, the app) is imported once per
    // worker, not once per file. A third of a file's time is waiting (a seller's deadline, a push's
    // backoff, a browser page, a spawned server), which the extra worker fills: on two cores, back to
    // back, 385 → 313 s of wall and 517 → 494 s of CPU, once the migrated embedded image was made once
    // a run instead of once a worker (test/fixtures/imageCache.ts; docs/testing.md).
    maxWorkers: Math.max(3, availableParallelism() + 1),
    isolate: false,
    // The longest files first, also in a fresh clone (which has no recorded durations).
    sequence: { sequencer: LongestFirst },
    // A test's console output (the app's request and security logs) is kept and printed only if it fails.
    silent: "passed-only",
    reporters: ["./test/setup/reporter.ts"]
  }
})
