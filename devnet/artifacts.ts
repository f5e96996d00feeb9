// The committed artifacts of the devnet's contracts (contracts/<name>.json beside contracts/<name>.sol):
// what the devnet deploys. Reading them needs no compiler; devnet/compile.ts writes them with solc-js,
// and test/devnet/artifacts.test.ts checks that they equal a fresh compile of the sources.
import { readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const contractsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "contracts")

/** The contracts the devnet deploys, each in contracts/<name>.sol. */
export const contractNames = ["DevnetUSD", "Multicall"] as const
export type ContractName = (typeof contractNames)[number]

export interface Artifact {
  readonly contractName: string
  readonly sourceName: string
  readonly compiler: { readonly version: string; readonly evmVersion: string; readonly optimizerRuns: number }
  readonly abi: ReadonlyArray<unknown>
  readonly bytecode: `0x${string}`
  readonly deployedBytecode: `0x${string}`
}

export const artifactPath = (name: ContractName, dir: string = contractsDir) => path.join(dir, `${name}.json`)

/** Reads a committed artifact. */
export const readArtifact = (name: ContractName): Artifact =>
  JSON.parse(readFileSync(artifactPath(name), "utf8")) as Artifact
