// The reporter `npm test` prints with: one line per test file (its counts and time), a failed
// test's name, error and the logs it wrote (the app's request and security logs included), and
// nothing else of a passing test. Before the totals it says what was skipped and why (the reason
// a prerequisite gave: a PostgreSQL server, chromium, …), so the last screen is the failures and
// the skips. Logs are kept per test by vitest (`silent: "passed-only"` in vitest.config.ts).
import type { SerializedError, TestCase, TestModule, TestModuleState, TestRunEndReason, TestSuite } from "vitest/node"
import { DefaultReporter, experimental_getRunnerTask } from "vitest/node"

/** The reason a skipped test gives: the " — …" its title or an enclosing suite's carries, or the file's "skipped: …" log. */
const reasonIn = (names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const at = name.indexOf(" — ")
    if (at >= 0) return name.slice(at + 3)
  }
  return undefined
}

/** The group of skips whose titles and files' logs do not say why (their files are listed). */
const UNSAID = "the titles do not say why"

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`

export default class QuietReporter extends DefaultReporter {
  /** Under the file's line, only the tests that failed (the default also lists passing ones slower than 300 ms). */
  protected override printTestCase(moduleState: TestModuleState, test: TestCase) {
    if (test.result().state === "failed") super.printTestCase(moduleState, test)
  }

  override onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason
  ) {
    this.printSkipped(testModules)
    super.onTestRunEnd(testModules, unhandledErrors, reason)
  }

  private printSkipped(testModules: ReadonlyArray<TestModule>) {
    const byReason = new Map<string, { tests: number; suites: number; files: Set<string> }>()
    const add = (why: string, file: string, kind: "tests" | "suites") => {
      const entry = byReason.get(why) ?? { tests: 0, suites: 0, files: new Set<string>() }
      entry[kind]++
      entry.files.add(file)
      byReason.set(why, entry)
    }
    for (const module of testModules) {
      const logged = (experimental_getRunnerTask(module).logs ?? [])
        .map((l) => l.content.trim())
        .filter((c) => c.startsWith("skipped: "))
        .map((c) => c.slice("skipped: ".length))
      const reasonOf = (entity: TestCase | TestSuite) => {
        const names: Array<string> = [entity.name]
        for (let p = entity.parent; p.type === "suite"; p = p.parent) names.push(p.name)
        return reasonIn(names) ?? logged[0] ?? UNSAID
      }
      for (const test of module.children.allTests("skipped"))
        if (test.options.mode !== "todo") add(reasonOf(test), module.relativeModuleId, "tests")
      // A suite skipped whole for a missing storage has no tests (test/fixtures/suite.ts).
      for (const suite of module.children.allSuites())
        if (suite.state() === "skipped" && suite.children.size === 0)
          add(reasonOf(suite), module.relativeModuleId, "suites")
    }
    if (byReason.size === 0) return
    this.log("")
    this.log(" Skipped for want of what this machine lacks (under CI=true they run, and fail if it is missing):")
    const sorted = [...byReason].sort((a, b) => b[1].tests + b[1].suites - (a[1].tests + a[1].suites))
    for (const [why, { tests, suites, files }] of sorted) {
      const what = [tests > 0 ? plural(tests, "test") : "", suites > 0 ? plural(suites, "whole suite") : ""]
        .filter((w) => w !== "")
        .join(" and ")
      const where = why === UNSAID ? `: ${[...files].sort().join(", ")}` : ""
      this.log(`   ${what} in ${plural(files.size, "file")}${where}: ${why}`)
    }
  }
}
