// The compiled contracts the devnet deploys are committed beside their sources (contracts/); they must
// be exactly what the pinned solc-js makes of those sources, so an edit without `npm run devnet:compile`
// fails here instead of deploying stale code.
import { describe, expect, it } from "vitest"
import { contractNames, readArtifact } from "../../devnet/artifacts.js"
import { compileContracts } from "../../devnet/compile.js"

describe("contracts/*.json", () => {
  it("equal a fresh solc-js compile of contracts/*.sol", () => {
    const compiled = compileContracts()
    for (const name of contractNames) expect(readArtifact(name), name).toEqual(compiled[name])
  })
})
