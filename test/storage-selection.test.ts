// Which storages the per-storage suites run (test/fixtures/storageSelection.ts): a CI run is green
// only having run every storage, so there TEST_STORAGES may not leave one out unless the run says it
// narrows on purpose; a developer may narrow freely; a name that is no storage fails everywhere.
import { describe, expect, it } from "vitest"
import { selectStorages } from "./fixtures/storageSelection.js"

const all = ["memory", "embedded", "postgres"]

describe("TEST_STORAGES", () => {
  it("unset or empty: every storage, in CI and out", () => {
    for (const CI of [undefined, "true"]) {
      expect(selectStorages({ CI })).toEqual(all)
      expect(selectStorages({ CI, TEST_STORAGES: "" })).toEqual(all)
      expect(selectStorages({ CI, TEST_STORAGES: " , " })).toEqual(all)
    }
  })

  it("on a developer's machine it narrows, to the storages it names", () => {
    for (const CI of [undefined, "", "0", "false"]) {
      expect(selectStorages({ CI, TEST_STORAGES: "memory" })).toEqual(["memory"])
      expect(selectStorages({ CI, TEST_STORAGES: "postgres, memory" })).toEqual(["memory", "postgres"])
    }
  })

  it("under CI, leaving a storage out fails, naming what it leaves out and how to say it is on purpose", () => {
    for (const CI of ["true", "1", "yes"]) {
      expect(() => selectStorages({ CI, TEST_STORAGES: "memory" })).toThrow(
        /CI=true and TEST_STORAGES=memory leaves out embedded, postgres: under CI every storage runs.*TEST_STORAGES_PARTIAL=1/
      )
      expect(() => selectStorages({ CI, TEST_STORAGES: "memory,embedded", TEST_STORAGES_PARTIAL: "0" })).toThrow(
        /leaves out postgres/
      )
    }
    // Naming all three is allowed (in any order).
    expect(selectStorages({ CI: "true", TEST_STORAGES: "postgres,embedded,memory" })).toEqual(all)
  })

  it("under CI, a run that narrows on purpose says so: TEST_STORAGES_PARTIAL=1 (the mutation run)", () => {
    expect(selectStorages({ CI: "true", TEST_STORAGES: "memory", TEST_STORAGES_PARTIAL: "1" })).toEqual(["memory"])
  })

  it("a name that is no storage fails everywhere: a typo would run nothing", () => {
    for (const CI of [undefined, "true"])
      expect(() => selectStorages({ CI, TEST_STORAGES: "memory,postgress" })).toThrow(
        "TEST_STORAGES names no storage: postgress"
      )
  })
})
