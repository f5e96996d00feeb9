// The order test files start in: the longest first, so the two workers end together instead of one
// running a long file alone at the end. vitest orders a run by the durations it recorded in the
// previous one (node_modules/.vite/vitest); a fresh clone has none, and vitest then starts the
// largest files first, which put the reference model (a small file, 76 s) among the last. Here a
// file without a recorded duration takes the one measured below, and an unlisted one comes after
// them, by size.
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Seconds the longest files took in runs on the 2-core machine (2 workers, load 5–17,
 * docs/testing.md); only their order matters. Files that need chromium, patroni or PostgreSQL
 * binaries are here too: where those are missing they skip and take no time.
 */
const MEASURED: Readonly<Record<string, number>> = {
  "test/http/contract-requests.test.ts": 35,
  "test/model/money.model.test.ts": 56,
  "test/faults/embedded-restart.test.ts": 60,
  "test/examples/seller.test.ts": 25,
  "test/faults/orders-crash.test.ts": 35,
  "test/suites/pages.test.ts": 52,
  "test/http/site-a11y.browser.test.ts": 30,
  "test/suites/orders-push.test.ts": 39,
  "test/http/acp.test.ts": 27,
  "test/faults/postgres-restart.test.ts": 37,
  "test/startup.test.ts": 34,
  "test/suites/webhooks-fairness.test.ts": 31,
  "test/fuzz/http.fuzz.test.ts": 31,
  "test/http/keys-cli.test.ts": 20,
  "test/http/dashboard.browser.test.ts": 22,
  "test/http/owner-console.browser.test.ts": 25,
  "test/faults/idempotency-failover.test.ts": 27,
  "test/faults/failover.test.ts": 26,
  "test/suites/ranking.test.ts": 40,
  "test/http/projects.test.ts": 7,
  "test/suites/catalogue.test.ts": 28,
  "test/config.test.ts": 24,
  "test/http/signin-throttle.test.ts": 9,
  "test/embedded-vacuum.test.ts": 21
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    // vitest's own order (recorded durations, else size) breaks the ties.
    const base = await super.sort(files)
    const root = this.ctx.config.root
    const known = (spec: TestSpecification) => this.ctx.cache.getTestSpecificationResult(spec)
    // The longer of the recorded and the measured: a file that skipped last time (no chromium yet, say)
    // recorded ~0 ms and would otherwise run last once it can run, alone at the end (seen: the three
    // browser files, 50 s of a 440 s run, after every other file).
    const milliseconds = (spec: TestSpecification) =>
      Math.max(known(spec)?.duration ?? 0, (MEASURED[spec.moduleId.slice(root.length + 1)] ?? 0) * 1000)
    // A file that failed last time still goes first, as in vitest's own order.
    const failed = (spec: TestSpecification) => (known(spec)?.failed ? 1 : 0)
    return [...base].sort((a, b) => failed(b) - failed(a) || milliseconds(b) - milliseconds(a))
  }
}
