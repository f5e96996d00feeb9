// Compiles the devnet's contracts (contracts/*.sol) with solc-js from npm, pinned, and writes each
// artifact (abi, creation and runtime bytecode, the settings that made them) beside its source.
// `npm run devnet:compile` rewrites the committed artifacts. With `--check` it writes nothing and
// exits 1 naming each artifact that differs from a fresh compile of its source (byte for byte, as
// written); test/devnet/artifacts.test.ts runs that, so a source edit without a recompile fails CI.
// `--contracts <dir>` compiles another folder of the same contracts (the test's stale copy).
import { existsSync, readFileSync, writeFileSync } from "node:fs"
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
export const compileContracts = (dir: string = contractsDir): Record<ContractName, Artifact> => {
  const version = solc.version() as string
  if (!version.startsWith(`${solcVersion}+`)) {
    throw new Error(`solc ${solcVersion} expected, ${version} is installed`)
  }
  const sources = Object.fromEntries(
    contractNames.map((name) => [`${name}.sol`, { content: readFileSync(path.join(dir, `${name}.sol`), "utf8") }])
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

// Written as Prettier would, so `npm run format:check` passes on a fresh compile.
const artifactText = (artifact: Artifact, file: string) => prettier.format(JSON.stringify(artifact), { filepath: file })

const main = async (args: ReadonlyArray<string>) => {
  const check = args.includes("--check")
  const at = args.indexOf("--contracts")
  const dir = at === -1 ? contractsDir : path.resolve(args[at + 1] ?? ".")
  const artifacts = compileContracts(dir)
  const stale: Array<string> = []
  for (const name of contractNames) {
    const file = artifactPath(name, dir)
    const text = await artifactText(artifacts[name], file)
    const where = path.relative(process.cwd(), file)
    if (check) {
      const committed = existsSync(file) ? readFileSync(file, "utf8") : undefined
      if (committed !== text) stale.push(where)
      continue
    }
    writeFileSync(file, text)
    console.error(`wrote ${where} (${(artifacts[name].deployedBytecode.length - 2) / 2} bytes of runtime code)`)
  }
  if (stale.length > 0) {
    console.error(`stale: ${stale.join(", ")} differ from a compile of their sources; run npm run devnet:compile`)
    process.exit(1)
  }
  if (check)
    console.error(`up to date: ${contractNames.map((n) => `${n}.json`).join(", ")} equal a compile of their sources`)
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2))
}
