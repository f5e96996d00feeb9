// The devnet's x402 facilitator: x402's own facilitator code (`x402Facilitator` from @x402/core with
// @x402/evm's "exact" scheme registered) behind the facilitator HTTP API x402 v2 defines — POST
// /verify, POST /settle, GET /supported — on 127.0.0.1. It pays the gas of each settlement from its own
// key on the devnet's chain through a viem wallet client, as a hosted facilitator does on a public
// chain. @x402/core ships the client of this API (HTTPFacilitatorClient) but no server, hence the
// small node:http one here.
//
// Run as its own process by devnet/start.ts (`node --import tsx devnet/facilitator.ts`, configured by
// the environment below); prints one JSON line `{"facilitatorUrl": …}` on stdout once it listens, logs
// on stderr, and exits cleanly on SIGINT/SIGTERM.
import { x402Facilitator } from "@x402/core/facilitator"
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema, type PaymentRequirementsV2 } from "@x402/core/schemas"
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types"
import { toFacilitatorEvmSigner } from "@x402/evm"
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { createWalletClient, http, publicActions, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { devnetChain } from "./network.js"

export interface FacilitatorOptions {
  readonly rpcUrl: string
  readonly chainId: number
  /** The key that signs and pays for the settlement transactions. */
  readonly privateKey: Hex
  /** 0 (the default) picks a free port. */
  readonly port?: number
  readonly log?: (line: string) => void
}

class BadRequest extends Error {}

// The network was checked by the schema (CAIP-2, `namespace:reference`).
const asRequirements = (r: PaymentRequirementsV2): PaymentRequirements => ({
  ...r,
  network: r.network as Network,
  extra: r.extra ?? {}
})

const zodProblem = (field: string, issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>) => {
  const first = issues[0]
  const where = [field, ...(first?.path ?? []).map(String)].join(".")
  return new BadRequest(`${where}: ${first?.message ?? "invalid"}`)
}

// The body of POST /verify and POST /settle: `{x402Version, paymentPayload, paymentRequirements}`,
// the payload and requirements checked by x402's own schemas (@x402/core/schemas), so what is
// accepted is what the protocol defines. This facilitator speaks x402 v2 only.
const decodeRequest = (body: unknown) => {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new BadRequest("the body must be a JSON object")
  const envelope = body as Record<string, unknown>
  if (envelope.x402Version !== 2) throw new BadRequest("x402Version: this facilitator speaks x402 version 2")
  const payload = PaymentPayloadV2Schema.safeParse(envelope.paymentPayload)
  if (!payload.success) throw zodProblem("paymentPayload", payload.error.issues)
  const requirements = PaymentRequirementsV2Schema.safeParse(envelope.paymentRequirements)
  if (!requirements.success) throw zodProblem("paymentRequirements", requirements.error.issues)
  // The schemas accept null for the optional fields; x402's facilitator types want them absent.
  const { extensions, resource, ...rest } = payload.data
  const decoded: PaymentPayload = {
    ...rest,
    accepted: asRequirements(rest.accepted),
    ...(extensions == null ? {} : { extensions }),
    ...(resource == null ? {} : { resource })
  }
  return { payload: decoded, requirements: asRequirements(requirements.data) }
}

const readJson = (req: IncomingMessage) =>
  new Promise<unknown>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch {
        reject(new BadRequest("the body is not JSON"))
      }
    })
    req.on("error", reject)
  })

export interface FacilitatorServer {
  readonly url: string
  readonly address: Hex
  readonly stop: () => Promise<void>
}

export const startFacilitator = async (options: FacilitatorOptions): Promise<FacilitatorServer> => {
  const log = options.log ?? (() => {})
  const account = privateKeyToAccount(options.privateKey)
  const client = createWalletClient({
    account,
    chain: devnetChain(options.chainId, options.rpcUrl),
    transport: http(options.rpcUrl),
    // Blocks are mined at once: a receipt is there by the next poll.
    pollingInterval: 50
  }).extend(publicActions)
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: (args) => client.getCode(args),
      readContract: (args) => client.readContract({ ...args, args: args.args ?? [] }),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (args) => client.writeContract({ ...args, args: args.args }),
      sendTransaction: (args) => client.sendTransaction(args),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args)
    },
    { confirmationTimeoutMs: 30_000 }
  )
  const network = `eip155:${options.chainId}` as const
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: network })
    .onAfterSettle(async ({ result }) =>
      log(
        result.success
          ? `settled ${result.transaction} for ${result.payer ?? "?"}`
          : `settle refused (${result.errorReason ?? "?"}) for ${result.payer ?? "?"}`
      )
    )
    .onSettleFailure(async ({ error }) => log(`settle failed: ${error.message}`))

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    const route = `${req.method} ${new URL(req.url ?? "/", "http://devnet").pathname}`
    const run = async () => {
      if (route === "GET /supported") return answer(200, facilitator.getSupported())
      if (route === "POST /verify" || route === "POST /settle") {
        const { payload, requirements } = decodeRequest(await readJson(req))
        const result =
          route === "POST /verify"
            ? await facilitator.verify(payload, requirements)
            : await facilitator.settle(payload, requirements)
        log(`${route} → ${JSON.stringify(result)}`)
        // A refused payment is an answer (isValid / success false), not an HTTP error, as x402's
        // HTTPFacilitatorClient expects.
        return answer(200, result)
      }
      return answer(404, {
        error: `no route ${route}: this facilitator serves POST /verify, POST /settle, GET /supported`
      })
    }
    run().catch((e: unknown) => {
      if (e instanceof BadRequest) return answer(400, { error: e.message })
      log(`${route} failed: ${e instanceof Error ? e.stack : String(e)}`)
      return answer(500, { error: e instanceof Error ? e.message : String(e) })
    })
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    address: account.address,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

// As its own process: configured by the environment, one ready line on stdout.
const main = async () => {
  const need = (name: string) => {
    const value = process.env[name]
    if (value === undefined || value === "") throw new Error(`${name} is required`)
    return value
  }
  const log = (line: string) => process.stderr.write(`[facilitator] ${line}\n`)
  const server = await startFacilitator({
    rpcUrl: need("DEVNET_RPC_URL"),
    chainId: Number(need("DEVNET_CHAIN_ID")),
    privateKey: need("FACILITATOR_PRIVATE_KEY") as Hex,
    port: Number(process.env.FACILITATOR_PORT ?? "0"),
    log
  })
  log(`listening on ${server.url}, paying gas from ${server.address}`)
  process.stdout.write(`${JSON.stringify({ facilitatorUrl: server.url })}\n`)
  const stop = () => void server.stop().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  // Started by devnet/start.ts: its stdin is a pipe from the devnet, which closes when the devnet dies,
  // however it dies, so no facilitator outlives it.
  if (process.env.DEVNET_EXIT_WITH_PARENT === "1") {
    process.stdin.on("close", stop).resume()
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`[facilitator] ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  })
}
