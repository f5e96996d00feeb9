// The chain as the operator reaches it, with viem over X402_RPC_URL: whether an EIP-3009
// authorization was used (the token's `authorizationState`, and its `AuthorizationUsed` log for the
// transaction), the chain's time, and refunds: an ERC-20 `transfer` from the operator's refund
// wallet (X402_REFUND_PRIVATE_KEY), signed at the wallet's pending nonce without being sent, then
// broadcast (again when asked: the same raw transaction) and awaited a bounded time. Where a refund
// stands is read nonce first, receipt second: a nonce spent with no receipt for the hash means the
// refund can never be mined (read the other way round, a refund mined between the two reads would
// look dropped). One refund is signed at a time per process; two processes (or two payments) that
// sign at the same nonce lose nothing: the chain mines one, the other is dropped and signed again.
// A refund stuck below the going fee is replaced at its own nonce with fees an eighth higher; the
// receipts read are then its own and those of every refund it replaced.
import { Effect, Layer, Option, Redacted, Semaphore } from "effect"
import type { X402Config } from "../../services/platform/AppConfig.js"
import { Chain, ChainUnavailable, type RefundState, Refunds, type SignedRefund } from "../../services/x402/ports.js"

const unavailable = (what: string) => (e: unknown) =>
  new ChainUnavailable({ reason: `${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` })

/** A fee raised by an eighth, rounded up. */
const raised = (fee: bigint) => fee + (fee + 7n) / 8n
const maxOf = (a: bigint | undefined, b: bigint) => (a === undefined || a < b ? b : a)

/**
 * The chain reader and refunds for a configured x402 with a refund wallet and an RPC. viem is
 * loaded when the layer is built, not when the server starts: a server without x402 never loads it
 * (~30 MB of its resident memory).
 */
export const viemChain = (x402: X402Config) =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => Promise.all([import("viem"), import("viem/accounts")])),
      ([viem, accounts]) => viemChainWith(viem, accounts, x402)
    )
  )

const viemChainWith = (
  viem: typeof import("viem"),
  { privateKeyToAccount }: typeof import("viem/accounts"),
  x402: X402Config
) => {
  const {
    createPublicClient,
    createWalletClient,
    defineChain,
    encodeFunctionData,
    getAddress,
    http,
    keccak256,
    parseAbi,
    parseEventLogs,
    parseTransaction,
    TransactionReceiptNotFoundError
  } = viem
  const tokenAbi = parseAbi([
    "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
    "function transfer(address to, uint256 value) returns (bool)",
    "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
    "event Transfer(address indexed from, address indexed to, uint256 value)"
  ])
  const rpcUrl = Option.getOrThrow(x402.rpcUrl)
  const chain = defineChain({
    id: x402.chainId,
    name: x402.network,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } }
  })
  const transport = http(rpcUrl, { timeout: x402.facilitatorTimeoutMs })
  const publicClient = createPublicClient({ chain, transport })
  const reader = Chain.of({
    authorizationState: Effect.fnUntraced(function* ({ asset, from, nonce }) {
      const used = yield* Effect.tryPromise({
        try: () =>
          publicClient.readContract({
            address: getAddress(asset),
            abi: tokenAbi,
            functionName: "authorizationState",
            args: [getAddress(from), nonce as `0x${string}`]
          }),
        catch: unavailable("authorizationState")
      })
      if (!used) return { _tag: "Unused" as const }
      // The transaction that used it, when the node keeps the log (a pruned node may not).
      const logs = yield* Effect.tryPromise({
        try: () =>
          publicClient.getContractEvents({
            address: getAddress(asset),
            abi: tokenAbi,
            eventName: "AuthorizationUsed",
            args: { authorizer: getAddress(from), nonce: nonce as `0x${string}` },
            fromBlock: "earliest"
          }),
        catch: unavailable("AuthorizationUsed logs")
      }).pipe(Effect.orElseSucceed(() => []))
      return { _tag: "Used" as const, transaction: logs[0]?.transactionHash ?? null }
    }),
    now: Effect.tryPromise({
      try: async () => Number((await publicClient.getBlock()).timestamp),
      catch: unavailable("latest block")
    }),
    transfersIn: ({ transaction, asset }) =>
      Effect.tryPromise({
        try: async () => {
          let receipt
          try {
            receipt = await publicClient.getTransactionReceipt({ hash: transaction as `0x${string}` })
          } catch (e) {
            if (e instanceof TransactionReceiptNotFoundError) return null
            throw e
          }
          if (receipt.status !== "success") return []
          const token = getAddress(asset)
          return parseEventLogs({ abi: tokenAbi, eventName: "Transfer", logs: receipt.logs })
            .filter((log) => getAddress(log.address) === token)
            .map((log) => ({ from: log.args.from.toLowerCase(), to: log.args.to.toLowerCase(), value: log.args.value }))
        },
        catch: unavailable("transfers of a transaction")
      })
  })
  const layers = Layer.succeed(Chain, reader)
  if (Option.isNone(x402.refundPrivateKey)) {
    const none = Effect.fail(new ChainUnavailable({ reason: "no refund wallet (X402_REFUND_PRIVATE_KEY)" }))
    return Layer.merge(layers, Layer.succeed(Refunds, Refunds.of({ sign: () => none, send: () => none })))
  }
  const account = privateKeyToAccount(Redacted.value(x402.refundPrivateKey.value) as `0x${string}`)
  const wallet = createWalletClient({ account, chain, transport })
  /** Nonce first, receipts second (see the header). */
  const stateOf = async (refund: SignedRefund): Promise<RefundState> => {
    const spent = await publicClient.getTransactionCount({ address: account.address, blockTag: "latest" })
    // It, and the refunds at its nonce it replaced: the chain mined one of them at most.
    for (const hash of [refund.transaction, ...(refund.replaces ?? [])]) {
      try {
        const receipt = await publicClient.getTransactionReceipt({ hash: hash as `0x${string}` })
        return { _tag: "Mined", success: receipt.status === "success", transaction: hash }
      } catch (e) {
        if (!(e instanceof TransactionReceiptNotFoundError)) throw e
      }
    }
    return spent > refund.nonce ? { _tag: "Dropped" } : { _tag: "Open" }
  }
  return Layer.merge(
    layers,
    Layer.effect(
      Refunds,
      Effect.map(Semaphore.make(1), (one) =>
        Refunds.of({
          sign: ({ asset, to, amount, replacing }) =>
            one.withPermits(1)(
              Effect.tryPromise({
                try: async (): Promise<SignedRefund> => {
                  const nonce =
                    replacing?.nonce ??
                    (await publicClient.getTransactionCount({
                      address: account.address,
                      blockTag: "pending"
                    }))
                  // A replacement: its fees an eighth above the stuck one's (nodes ask at least a tenth),
                  // and at least what the chain asks now.
                  const before = replacing === undefined ? undefined : parseTransaction(replacing.raw as `0x${string}`)
                  const fees =
                    before?.maxFeePerGas === undefined || before.maxPriorityFeePerGas === undefined
                      ? {}
                      : await publicClient.estimateFeesPerGas().then((now) => ({
                          maxFeePerGas: maxOf(now.maxFeePerGas, raised(before.maxFeePerGas!)),
                          maxPriorityFeePerGas: maxOf(now.maxPriorityFeePerGas, raised(before.maxPriorityFeePerGas!))
                        }))
                  const request = await wallet.prepareTransactionRequest({
                    to: getAddress(asset),
                    data: encodeFunctionData({
                      abi: tokenAbi,
                      functionName: "transfer",
                      args: [getAddress(to), amount]
                    }),
                    nonce,
                    ...fees
                  })
                  const raw = await wallet.signTransaction(request)
                  return { transaction: keccak256(raw), nonce, raw }
                },
                catch: unavailable("refund signature")
              })
            ),
          send: (refund) =>
            Effect.tryPromise({
              try: async () => {
                // Already known, nonce too low, replacement underpriced: the state read below says what it means.
                const broadcast = await publicClient
                  .sendRawTransaction({ serializedTransaction: refund.raw as `0x${string}` })
                  .then(
                    () => true,
                    () => false
                  )
                if (broadcast)
                  await publicClient
                    .waitForTransactionReceipt({
                      hash: refund.transaction as `0x${string}`,
                      timeout: x402.facilitatorTimeoutMs
                    })
                    .catch(() => undefined)
                return stateOf(refund)
              },
              catch: unavailable("refund transfer")
            })
        })
      )
    )
  )
}
