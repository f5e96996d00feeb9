// Starts the devnet (docs/devnet.md): a local EVM chain on 127.0.0.1 (devnet/chain.ts), the DevnetUSD
// stablecoin deployed on it (contracts/), payer accounts funded with the token and with gas, a refund
// wallet for the server, and an x402 facilitator as its own process (devnet/facilitator.ts). Used by
// `npm run devnet` (devnet/main.ts) and by tests, which get the same description the command prints.
import { spawn, type ChildProcess } from "node:child_process"
import path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { createPublicClient, createWalletClient, getAddress, http, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts"
import { startChain } from "./chain.js"
import { readArtifact } from "./artifacts.js"
import { devnetChain } from "./network.js"

/** Where Multicall3 lives on public chains; x402's facilitator reads through it (contracts/Multicall.sol). */
export const multicall3Address = "0xcA11bde05977b3631167028862bE2a173976CA11"

const ether = 10n ** 18n
/** The token has 6 decimals: one dollar is 1,000,000 base units, one cent 10,000. */
export const dollars = (n: number) => BigInt(Math.round(n * 100)) * 10_000n

/** What `npm run devnet` prints, as one JSON line. */
export interface DevnetInfo {
  readonly network: `eip155:${number}`
  readonly rpcUrl: string
  readonly asset: Hex
  readonly facilitatorUrl: string
  readonly payerPrivateKeys: ReadonlyArray<Hex>
  /** Exactly the variables to start the server with so it takes x402 payments on this chain. */
  readonly serverEnv: {
    readonly X402_NETWORK: string
    readonly X402_ASSET: Hex
    readonly X402_ASSET_NAME: string
    readonly X402_ASSET_VERSION: string
    readonly X402_ASSET_DECIMALS: string
    readonly X402_PAY_TO: Hex
    readonly X402_FACILITATOR_URL: string
    readonly X402_REFUND_PRIVATE_KEY: Hex
    readonly X402_RPC_URL: string
  }
}

export interface DevnetOptions {
  /** 31337 unless given. */
  readonly chainId?: number
  /** 0 (the default) picks free ports. */
  readonly rpcPort?: number
  readonly facilitatorPort?: number
  /** How many funded payer accounts; 3 unless given. */
  readonly payers?: number
  /** Where progress and the facilitator's log go (stderr for the command); nowhere unless given. */
  readonly log?: (line: string) => void
  /** Logs every JSON-RPC call the chain answers. */
  readonly trace?: boolean
}

export interface Devnet {
  readonly info: DevnetInfo
  readonly chainId: number
  /** Keys the devnet keeps and does not print: the receiving address's, the token deployer's, the facilitator's gas key. */
  readonly keys: { readonly payTo: Hex; readonly deployer: Hex; readonly facilitator: Hex }
  /** Stops the facilitator process and the chain; their ports are free when it resolves. */
  readonly stop: () => Promise<void>
}

/** Funding at start: each payer and the refund wallet get this much of the token (base units) and gas (wei). */
export const funding = {
  payerToken: dollars(1_000),
  payerGas: 10n * ether,
  refundToken: dollars(10_000),
  refundGas: 10n * ether,
  facilitatorGas: 100n * ether
} as const

const facilitatorEntry = path.join(path.dirname(fileURLToPath(import.meta.url)), "facilitator.ts")

const readyTimeoutMs = 30_000

const spawnFacilitator = (
  env: Record<string, string>,
  log: (line: string) => void
): Promise<{ child: ChildProcess; url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), facilitatorEntry], {
      env: { ...process.env, ...env, DEVNET_EXIT_WITH_PARENT: "1" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    createInterface({ input: child.stderr! }).on("line", log)
    const lines = createInterface({ input: child.stdout! })
    const fail = (why: string) => {
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(new Error(why))
    }
    const timer = setTimeout(() => fail(`the facilitator did not listen within ${readyTimeoutMs} ms`), readyTimeoutMs)
    const onExit = (code: number | null) => fail(`the facilitator exited (${code}) before it listened`)
    child.once("exit", onExit)
    child.once("error", (e) => fail(e.message))
    lines.once("line", (line) => {
      clearTimeout(timer)
      child.off("exit", onExit)
      try {
        resolve({ child, url: (JSON.parse(line) as { facilitatorUrl: string }).facilitatorUrl })
      } catch {
        reject(new Error(`the facilitator's ready line is not JSON: ${line}`))
      }
    })
  })

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

export const startDevnet = async (options: DevnetOptions = {}): Promise<Devnet> => {
  const log = options.log ?? (() => {})
  const chainId = options.chainId ?? 31337
  const started = performance.now()
  const keys = { deployer: generatePrivateKey(), facilitator: generatePrivateKey(), payTo: generatePrivateKey() }
  const refundKey = generatePrivateKey()
  const payerKeys = Array.from({ length: options.payers ?? 3 }, () => generatePrivateKey())

  const chain = await startChain({
    chainId,
    ...(options.rpcPort === undefined ? {} : { port: options.rpcPort }),
    genesisAccounts: [
      { privateKey: keys.deployer, balance: 1_000n * ether },
      { privateKey: keys.facilitator, balance: funding.facilitatorGas },
      { privateKey: keys.payTo, balance: ether },
      { privateKey: refundKey, balance: funding.refundGas },
      ...payerKeys.map((privateKey) => ({ privateKey, balance: funding.payerGas }))
    ],
    log,
    trace: options.trace === true
  })
  log(`chain ${chainId} at ${chain.rpcUrl}`)
  let facilitator: ReturnType<typeof spawnFacilitator> | undefined
  const stop = async () => {
    await facilitator?.then(({ child }) => stopChild(child)).catch(() => {})
    await chain.stop()
  }
  try {
    // The facilitator process starts (its imports take most of a second) while the token is deployed.
    facilitator = spawnFacilitator(
      {
        DEVNET_RPC_URL: chain.rpcUrl,
        DEVNET_CHAIN_ID: String(chainId),
        FACILITATOR_PRIVATE_KEY: keys.facilitator,
        FACILITATOR_PORT: String(options.facilitatorPort ?? 0)
      },
      log
    )
    // Its failure is told where it is awaited, below; until then it must not count as unhandled.
    facilitator.catch(() => {})

    await chain.request("hardhat_setCode", [multicall3Address, readArtifact("Multicall").deployedBytecode])
    const viemChain = devnetChain(chainId, chain.rpcUrl)
    const publicClient = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl), pollingInterval: 50 })
    const deployer = createWalletClient({
      account: privateKeyToAccount(keys.deployer),
      chain: viemChain,
      transport: http(chain.rpcUrl)
    })
    const token = readArtifact("DevnetUSD")
    const deployHash = await deployer.deployContract({ abi: token.abi, bytecode: token.bytecode })
    const created = (await publicClient.waitForTransactionReceipt({ hash: deployHash })).contractAddress
    if (created === null || created === undefined) throw new Error("the token's deployment created no contract")
    const asset = getAddress(created)
    const mints = [
      ...payerKeys.map((k) => ({ to: privateKeyToAddress(k), value: funding.payerToken })),
      { to: privateKeyToAddress(refundKey), value: funding.refundToken }
    ]
    for (const { to, value } of mints) {
      const hash = await deployer.writeContract({
        address: asset,
        abi: token.abi,
        functionName: "mint",
        args: [to, value]
      })
      const receipt = await publicClient.waitForTransactionReceipt({ hash })
      if (receipt.status !== "success") throw new Error(`minting to ${to} failed`)
    }
    const [name, version, decimals] = await Promise.all(
      (["name", "version", "decimals"] as const).map(
        (functionName) =>
          publicClient.readContract({ address: asset, abi: token.abi, functionName }) as Promise<string | number>
      )
    )
    log(`DevnetUSD (${name}, version ${version}) at ${asset}; ${payerKeys.length} payers funded`)

    const { url: facilitatorUrl } = await facilitator
    const network = `eip155:${chainId}` as const
    const info: DevnetInfo = {
      network,
      rpcUrl: chain.rpcUrl,
      asset,
      facilitatorUrl,
      payerPrivateKeys: payerKeys,
      serverEnv: {
        X402_NETWORK: network,
        X402_ASSET: asset,
        X402_ASSET_NAME: String(name),
        X402_ASSET_VERSION: String(version),
        X402_ASSET_DECIMALS: String(decimals),
        X402_PAY_TO: privateKeyToAddress(keys.payTo),
        X402_FACILITATOR_URL: facilitatorUrl,
        X402_REFUND_PRIVATE_KEY: refundKey,
        X402_RPC_URL: chain.rpcUrl
      }
    }
    log(`ready in ${Math.round(performance.now() - started)} ms`)
    return { info, chainId, keys, stop }
  } catch (e) {
    // Whatever started (the facilitator may still be starting) is stopped before the failure is told.
    await stop()
    throw e
  }
}
