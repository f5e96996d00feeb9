// The chain as the operator reaches it, with viem over X402_RPC_URL: whether an EIP-3009
// authorization was used (the token's `authorizationState`, and its `AuthorizationUsed` log for the
// transaction), the chain's time, and refunds: an ERC-20 `transfer` from the operator's refund
// wallet (X402_REFUND_PRIVATE_KEY), awaited until mined. One refund is sent at a time per process,
// so the wallet's nonces never race.
import { Effect, Layer, Option, Redacted, Semaphore } from "effect"
import { createPublicClient, createWalletClient, defineChain, getAddress, http, parseAbi } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { X402Config } from "../../services/platform/AppConfig.js"
import { Chain, ChainUnavailable, Refunds } from "../../services/x402/ports.js"

const tokenAbi = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transfer(address to, uint256 value) returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)"
])

const unavailable = (what: string) => (e: unknown) =>
  new ChainUnavailable({ reason: `${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` })

/** The chain reader and refunds for a configured x402 with a refund wallet and an RPC. */
export const viemChain = (x402: X402Config) => {
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
    })
  })
  const layers = Layer.succeed(Chain, reader)
  if (Option.isNone(x402.refundPrivateKey)) {
    const none = Effect.fail(new ChainUnavailable({ reason: "no refund wallet (X402_REFUND_PRIVATE_KEY)" }))
    return Layer.merge(layers, Layer.succeed(Refunds, Refunds.of({ refund: () => none })))
  }
  const account = privateKeyToAccount(Redacted.value(x402.refundPrivateKey.value) as `0x${string}`)
  const wallet = createWalletClient({ account, chain, transport })
  return Layer.merge(
    layers,
    Layer.effect(
      Refunds,
      Effect.map(Semaphore.make(1), (one) =>
        Refunds.of({
          refund: ({ asset, to, amount }) =>
            one.withPermits(1)(
              Effect.tryPromise({
                try: async () => {
                  const hash = await wallet.writeContract({
                    address: getAddress(asset),
                    abi: tokenAbi,
                    functionName: "transfer",
                    args: [getAddress(to), amount]
                  })
                  const receipt = await publicClient.waitForTransactionReceipt({ hash })
                  if (receipt.status !== "success") throw new Error(`refund transaction ${hash} reverted`)
                  return { transaction: hash as string }
                },
                catch: unavailable("refund transfer")
              })
            )
        })
      )
    )
  )
}
