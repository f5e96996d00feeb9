// The devnet's chain: Hardhat's EVM (EDR, `@nomicfoundation/edr`, a native module from npm) in this
// process, reached over JSON-RPC on HTTP at 127.0.0.1 — the same wire a client uses for a public
// chain's node. Every transaction is mined at once into its own block (automine), on the Prague rules.
import {
  ContractDecoder,
  EdrContext,
  L1_CHAIN_TYPE,
  l1GenesisState,
  l1HardforkFromString,
  l1ProviderFactory,
  MineOrdering,
  type Provider
} from "@nomicfoundation/edr"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { privateKeyToAddress } from "viem/accounts"

export const hardfork = "prague"

export interface ChainOptions {
  readonly chainId: number
  /** 0 (the default) picks a free port. */
  readonly port?: number
  /** Accounts that exist at genesis with this much ether (in wei). */
  readonly genesisAccounts: ReadonlyArray<{ readonly privateKey: `0x${string}`; readonly balance: bigint }>
  readonly log?: (line: string) => void
  /** Logs every JSON-RPC call (its method and the start of its parameters). */
  readonly trace?: boolean
}

export interface Chain {
  readonly rpcUrl: string
  /** Sends one JSON-RPC call to the chain without HTTP (the devnet's own setup calls). */
  readonly request: (method: string, params: ReadonlyArray<unknown>) => Promise<unknown>
  readonly stop: () => Promise<void>
}

// EDR allows one context per process.
let context: Promise<EdrContext> | undefined
const edrContext = () =>
  (context ??= (async () => {
    const ctx = new EdrContext()
    await ctx.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory())
    return ctx
  })())

const hexToBytes = (hex: string) => Buffer.from(hex.replace(/^0x/, ""), "hex")

const createProvider = async (options: ChainOptions): Promise<Provider> => {
  const ctx = await edrContext()
  const chainId = BigInt(options.chainId)
  return ctx.createProvider(
    L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: false,
      allowUnlimitedContractSize: false,
      // As a public chain's node answers: a reverted eth_call (or gas estimate) is a JSON-RPC error
      // carrying the revert, and a reverted transaction is mined with status 0.
      bailOnCallFailure: true,
      bailOnTransactionFailure: false,
      chainId,
      coinbase: Buffer.alloc(20),
      defaultTransactionGasLimit: 16_000_000n,
      genesisState: [
        ...l1GenesisState(l1HardforkFromString(hardfork)),
        ...options.genesisAccounts.map((a) => ({
          address: hexToBytes(privateKeyToAddress(a.privateKey)),
          balance: a.balance
        }))
      ],
      hardfork,
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: MineOrdering.Priority } },
      network: { genesisBlockGasLimit: 60_000_000n },
      networkId: chainId,
      observability: {},
      ownedAccounts: [],
      precompileOverrides: []
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder()
  )
}

interface RpcCall {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly method?: unknown
  readonly params?: unknown
}

const rpcError = (id: unknown, code: number, message: string) => ({
  jsonrpc: "2.0",
  id: id ?? null,
  error: { code, message }
})

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const startChain = async (options: ChainOptions): Promise<Chain> => {
  const provider = await createProvider(options)
  const log = options.log ?? (() => {})

  // EDR answers `{result}` or `{error}`; the id and version are the caller's, put back here.
  const handle = async (call: RpcCall) => {
    if (call === null || typeof call !== "object" || typeof call.method !== "string") {
      return rpcError(call?.id, -32600, "invalid request: method must be a string")
    }
    if (options.trace === true) log(`rpc> ${call.method} ${JSON.stringify(call.params ?? []).slice(0, 300)}`)
    const response = await provider.handleRequest(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: call.method, params: call.params ?? [] })
    )
    const data = (typeof response.data === "string" ? JSON.parse(response.data) : response.data) as Record<
      string,
      unknown
    >
    // Reverted calls are expected (x402's facilitator simulates before it settles): one short line each.
    const error = data.error as { message?: unknown } | undefined
    // viem asks for eth_fillTransaction first and falls back when the node lacks it: not worth a line.
    if (error !== undefined && call.method !== "eth_fillTransaction")
      log(`rpc ${call.method}: ${String(error.message).slice(0, 200)}`)
    return { ...data, jsonrpc: "2.0", id: call.id ?? null }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    if (req.method !== "POST") return answer(405, rpcError(null, -32600, "JSON-RPC is POST only"))
    readBody(req)
      .then(async (text) => {
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          return answer(400, rpcError(null, -32700, "parse error: the body is not JSON"))
        }
        return answer(
          200,
          Array.isArray(parsed) ? await Promise.all(parsed.map(handle)) : await handle(parsed as RpcCall)
        )
      })
      .catch((e: unknown) => answer(500, rpcError(null, -32603, e instanceof Error ? e.message : String(e))))
  })
  // Connections a client keeps alive must not hold the port open after stop().
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo

  const request = async (method: string, params: ReadonlyArray<unknown>) => {
    const answer = (await handle({ method, params })) as { result?: unknown; error?: { message?: string } }
    if (answer.error !== undefined)
      throw new Error(`${method}: ${answer.error.message ?? JSON.stringify(answer.error)}`)
    return answer.result
  }

  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    request,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
