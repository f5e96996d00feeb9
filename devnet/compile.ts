// Compiles the devnet's contracts (contracts/*.sol) with solc-js from npm, pinned, and writes each
// artifact (abi, creation and runtime bytecode, the settings that made them) beside its source.
// `npm run devnet:compile` rewrites the committed artifacts; test/devnet/artifacts.test.ts checks
// that they equal a fresh compile, so a source edit without a recompile fails CI.
import { readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import * as prettier from "prettier"
import solc from "solc"
import { artifactPath, contractNames, contractsDir, type Artifact, type ContractName } from "./artifacts.js"

// The chain (devnet/chain.ts) runs the Prague rules, so the code may use every opcode up to Prague.
export const evmVersion = "prague"
export const solcVersion = "0.8.37"

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts: Record<
    string,
    Record<
      string,
      {
        readonly abi: ReadonlyArray<unknown>
        readonly evm: {
          readonly bytecode: { readonly object: string }
          readonly deployedBytecode: { readonly object: string }
        }
      }
    >
  >
}

const optimizerRuns = 200

/** Compiles every contract in memory; throws with solc's messages on any error. */
export const compileContracts = (): Record<ContractName, Artifact> => {
  const version = solc.version() as string
  if (!version.startsWith(`${solcVersion}+`)) {
    throw new Error(`solc ${solcVersion} expected, ${version} is installed`)
  }
  const sources = Object.fromEntries(
    contractNames.map((name) => [
      `${name}.sol`,
      { content: readFileSync(path.join(contractsDir, `${name}.sol`), "utf8") }
    ])
  )
  const input = {
    language: "Solidity",
    sources,
    settings: {
      evmVersion,
      optimizer: { enabled: true, runs: optimizerRuns },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input)) as string) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const artifact = (name: ContractName): Artifact => {
    const compiled = output.contracts[`${name}.sol`]?.[name]
    if (compiled === undefined) throw new Error(`solc produced no ${name}`)
    return {
      contractName: name,
      sourceName: `contracts/${name}.sol`,
      compiler: { version, evmVersion, optimizerRuns },
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
      deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`
    }
  }
  return { DevnetUSD: artifact("DevnetUSD"), Multicall: artifact("Multicall") }
}

const main = async () => {
  const artifacts = compileContracts()
  for (const name of contractNames) {
    const file = artifactPath(name)
    // Written as Prettier would, so `npm run format:check` passes on a fresh compile.
    const text = await prettier.format(JSON.stringify(artifacts[name]), { filepath: file })
    writeFileSync(file, text)
    console.error(
      `wrote ${path.relative(process.cwd(), file)} (${(artifacts[name].deployedBytecode.length - 2) / 2} bytes of runtime code)`
    )
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main()
}
