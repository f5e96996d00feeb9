// The simulated chain and facilitator (X402_FACILITATOR_URL=simulated; tests, in-memory development):
// honest, not a stub. The chain keeps each address's balance of the asset, the EIP-3009 nonces used
// and every transfer; the facilitator verifies the `exact` scheme's TransferWithAuthorization for
// real (the EIP-712 signature recovered with viem against the token's domain) and refuses what a
// token contract would: another payTo or amount, an authorization not yet or no longer valid, a
// nonce already used, a balance too low. What it stands in for is the chain and the facilitator's
// transaction; the protocol, the signatures and the bookkeeping of transfers are real. Tests may
// make the next settle time out (nothing moves) or lose its answer (the transfer happens, the
// answer never arrives), the two cases that make a payment's outcome unknown.
import { randomBytes } from "node:crypto"
import { Context, Effect, Layer, Schema } from "effect"
import { authorizationTypes } from "@x402/evm"
import { getAddress, recoverTypedDataAddress } from "viem"
import { AppConfig, type X402Config } from "../../services/platform/AppConfig.js"
import { Chain, ChainUnavailable, Facilitator, FacilitatorUnavailable, Refunds } from "../../services/x402/ports.js"
import {
  EXACT_SCHEME,
  ExactEvmPayload,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
  X402_VERSION
} from "../../schema/x402/x402.js"

export interface SimulatedTransfer {
  readonly transaction: string
  readonly asset: string
  readonly from: string
  readonly to: string
  readonly amount: bigint
  /** `settle` (a payer's authorization) or `refund` (from the operator's refund wallet). */
  readonly kind: "settle" | "refund"
  readonly nonce: string | null
  readonly reference: string | null
}

/** What the next settle does instead of answering: nothing moves (timeout), or it moves and the answer is lost. */
export type SettleFault = "timeout" | "lost"

const lower = (a: string) => a.toLowerCase()
const newHash = () => `0x${randomBytes(32).toString("hex")}`
const decodePayload = Schema.decodeUnknownOption(ExactEvmPayload)

/** The simulated chain: balances of one asset per address, used nonces, transfers. */
export class SimulatedChain {
  private readonly balances = new Map<string, bigint>()
  private readonly used = new Map<string, string>()
  readonly transfers: Array<SimulatedTransfer> = []
  private faults: Array<SettleFault> = []
  /** Calls of /settle the facilitator received (answered or not). */
  settleCalls = 0

  constructor(
    readonly config: Pick<X402Config, "network" | "chainId" | "asset" | "assetName" | "assetVersion" | "payTo">,
    /** What an address holds before anything moved (base units). */
    readonly startingBalance: bigint,
    /** The refund wallet's address. */
    readonly refundWallet: string = "0x000000000000000000000000000000000000dEaD",
    /** Seconds since the epoch: the chain's clock (payers sign validBefore from their wall clock). */
    readonly clock: () => number = () => Math.floor(Date.now() / 1000)
  ) {}

  balanceOf(address: string): bigint {
    return this.balances.get(lower(address)) ?? this.startingBalance
  }

  setBalance(address: string, amount: bigint): void {
    this.balances.set(lower(address), amount)
  }

  /** The next settles fail this way, in order (each fault once). */
  failNextSettle(...faults: ReadonlyArray<SettleFault>): void {
    this.faults.push(...faults)
  }

  nonceUsed(asset: string, from: string, nonce: string): string | undefined {
    return this.used.get(`${lower(asset)}:${lower(from)}:${lower(nonce)}`)
  }

  private move(t: Omit<SimulatedTransfer, "transaction">): string {
    const transaction = newHash()
    this.balances.set(lower(t.from), this.balanceOf(t.from) - t.amount)
    this.balances.set(lower(t.to), this.balanceOf(t.to) + t.amount)
    if (t.nonce !== null) this.used.set(`${lower(t.asset)}:${lower(t.from)}:${lower(t.nonce)}`, transaction)
    this.transfers.push({ ...t, transaction })
    return transaction
  }

  /** What the `exact` scheme's facilitator checks, as the token contract would; the payer when valid. */
  async verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements
  ): Promise<VerifyResponse & { readonly parsed?: typeof ExactEvmPayload.Type }> {
    const invalid = (invalidReason: string, invalidMessage: string, payer?: string): VerifyResponse => ({
      isValid: false,
      invalidReason,
      invalidMessage,
      ...(payer !== undefined ? { payer } : {})
    })
    if (payload.x402Version !== X402_VERSION || payload.accepted.scheme !== EXACT_SCHEME)
      return invalid("invalid_exact_evm_scheme", "only x402 v2 `exact` is supported")
    if (requirements.network !== this.config.network || payload.accepted.network !== requirements.network)
      return invalid("invalid_exact_evm_network_mismatch", `this chain is ${this.config.network}`)
    const parsed = decodePayload(payload.payload)
    if (parsed._tag === "None")
      return invalid("invalid_exact_evm_failed_to_parse_signature", "the payload is not an EIP-3009 authorization")
    const { authorization: a, signature } = parsed.value
    if (lower(requirements.asset) !== lower(this.config.asset))
      return invalid("invalid_exact_evm_token_name_mismatch", "another asset", a.from)
    if (lower(a.to) !== lower(requirements.payTo))
      return invalid("invalid_exact_evm_recipient_mismatch", "the authorization pays another address", a.from)
    if (a.value !== requirements.amount)
      return invalid("invalid_exact_evm_payload_authorization_value_mismatch", "another amount", a.from)
    const now = this.clock()
    if (BigInt(a.validBefore) < BigInt(now + 6))
      return invalid("invalid_exact_evm_payload_authorization_valid_before", "the authorization has expired", a.from)
    if (BigInt(a.validAfter) > BigInt(now))
      return invalid(
        "invalid_exact_evm_payload_authorization_valid_after",
        "the authorization is not valid yet",
        a.from
      )
    let signer: string
    try {
      signer = await recoverTypedDataAddress({
        domain: {
          name: this.config.assetName,
          version: this.config.assetVersion,
          chainId: this.config.chainId,
          verifyingContract: getAddress(this.config.asset)
        },
        types: authorizationTypes,
        primaryType: "TransferWithAuthorization",
        message: {
          from: getAddress(a.from),
          to: getAddress(a.to),
          value: BigInt(a.value),
          validAfter: BigInt(a.validAfter),
          validBefore: BigInt(a.validBefore),
          nonce: a.nonce as `0x${string}`
        },
        signature: signature as `0x${string}`
      })
    } catch {
      return invalid("invalid_exact_evm_signature", "the signature does not parse", a.from)
    }
    if (lower(signer) !== lower(a.from))
      return invalid("invalid_exact_evm_signature", "the signature is not the payer's", a.from)
    if (this.nonceUsed(this.config.asset, a.from, a.nonce) !== undefined)
      return invalid("invalid_exact_evm_nonce_already_used", "this authorization was already used", a.from)
    if (this.balanceOf(a.from) < BigInt(a.value))
      return invalid("invalid_exact_evm_insufficient_balance", "the payer's balance is too low", a.from)
    return { isValid: true, payer: a.from, parsed: parsed.value }
  }

  /** Verifies again and moves the asset, as `transferWithAuthorization` does (or a fault). */
  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse | SettleFault> {
    this.settleCalls++
    const fault = this.faults.shift()
    if (fault === "timeout") return fault
    const checked = await this.verify(payload, requirements)
    if (!checked.isValid || checked.parsed === undefined) {
      return {
        success: false,
        errorReason: checked.invalidReason ?? "invalid_exact_evm_transaction_failed",
        ...(checked.invalidMessage !== undefined ? { errorMessage: checked.invalidMessage } : {}),
        ...(checked.payer !== undefined ? { payer: checked.payer } : {}),
        transaction: "",
        network: this.config.network
      }
    }
    const a = checked.parsed.authorization
    const transaction = this.move({
      asset: this.config.asset,
      from: a.from,
      to: a.to,
      amount: BigInt(a.value),
      kind: "settle",
      nonce: a.nonce,
      reference: null
    })
    if (fault === "lost") return fault
    return { success: true, payer: a.from, transaction, network: this.config.network, amount: a.value }
  }

  /** A transfer from the refund wallet (once per reference: a refund retried moves nothing twice). */
  refund(input: { readonly to: string; readonly amount: bigint; readonly reference: string }): string {
    const done = this.transfers.find((t) => t.kind === "refund" && t.reference === input.reference)
    if (done !== undefined) return done.transaction
    return this.move({
      asset: this.config.asset,
      from: this.refundWallet,
      to: input.to,
      amount: input.amount,
      kind: "refund",
      nonce: null,
      reference: input.reference
    })
  }
}

/** The simulated chain of this process (tests read it from the server's context). */
class SimulatedChainRef extends Context.Service<SimulatedChainRef, SimulatedChain>()(
  "agent-commerce/X402SimulatedChain"
) {}

/** A payer's starting balance on the simulated chain: 1,000 units of a 6-decimal asset (1,000 USD). */
const STARTING_BALANCE = 1_000_000_000n

/**
 * The simulated chains of this process, one per payTo address: the server's layer and a test in
 * the same process reach the same chain (tests read its transfers and make a settle fail).
 */
const chains = new Map<string, SimulatedChain>()

/** The simulated chain that receives payments to `payTo` in this process (created on first use). */
export const simulatedChainOf = (x402: X402Config): SimulatedChain => {
  const key = x402.payTo.toLowerCase()
  let chain = chains.get(key)
  if (chain === undefined) {
    chain = new SimulatedChain(x402, STARTING_BALANCE * 10n ** BigInt(Math.max(0, x402.assetDecimals - 6)))
    chains.set(key, chain)
  }
  return chain
}

const SimulatedChainLive = Layer.effect(
  SimulatedChainRef,
  Effect.map(AppConfig, (config) => {
    const x402 = config.x402
    if (x402._tag === "None") throw new Error("the simulated chain needs x402 configured")
    return simulatedChainOf(x402.value)
  })
)

const unavailable = (operation: "verify" | "settle" | "supported", reason: string) =>
  new FacilitatorUnavailable({ operation, reason })

/** The facilitator, the chain reader and refunds over the simulated chain. */
export const SimulatedX402Live = Layer.mergeAll(
  Layer.effect(
    Facilitator,
    Effect.map(SimulatedChainRef, (chain) =>
      Facilitator.of({
        verify: (payload, requirements) =>
          Effect.map(
            Effect.promise(() => chain.verify(payload, requirements)),
            ({ parsed: _parsed, ...answer }) => answer
          ),
        settle: (payload, requirements) =>
          Effect.flatMap(
            Effect.promise(() => chain.settle(payload, requirements)),
            (answer) =>
              answer === "timeout"
                ? Effect.fail(unavailable("settle", "the facilitator did not answer in time"))
                : answer === "lost"
                  ? Effect.fail(unavailable("settle", "the facilitator's answer was lost"))
                  : Effect.succeed(answer)
          ),
        supported: Effect.succeed({
          kinds: [{ x402Version: X402_VERSION, scheme: EXACT_SCHEME, network: chain.config.network }],
          extensions: [],
          signers: {}
        })
      })
    )
  ),
  Layer.effect(
    Chain,
    Effect.map(SimulatedChainRef, (chain) =>
      Chain.of({
        authorizationState: ({ asset, from, nonce }) =>
          Effect.sync(() => {
            const transaction = chain.nonceUsed(asset, from, nonce)
            return transaction === undefined ? { _tag: "Unused" as const } : { _tag: "Used" as const, transaction }
          }),
        now: Effect.sync(() => chain.clock())
      })
    )
  ),
  Layer.effect(
    Refunds,
    Effect.map(SimulatedChainRef, (chain) =>
      Refunds.of({
        refund: (input) =>
          input.amount <= 0n
            ? Effect.fail(new ChainUnavailable({ reason: "a refund moves a positive amount" }))
            : Effect.sync(() => ({ transaction: chain.refund(input) }))
      })
    )
  )
).pipe(Layer.provideMerge(SimulatedChainLive))
