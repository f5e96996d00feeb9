// The simulated chain and facilitator (X402_FACILITATOR_URL=simulated; tests, in-memory development):
// honest, not a stub. The chain keeps each address's balance of the asset, the EIP-3009 nonces used
// and every transfer; the facilitator verifies the `exact` scheme's TransferWithAuthorization for
// real (the EIP-712 signature recovered with viem against the token's domain) and refuses what a
// token contract would: another payTo or amount, an authorization not yet or no longer valid, a
// nonce already used, a balance too low. What it stands in for is the chain and the facilitator's
// transaction; the protocol, the signatures and the bookkeeping of transfers are real. Tests may
// make the next settle time out (nothing moves) or lose its answer (the transfer happens, the
// answer never arrives), the two cases that make a payment's outcome unknown. Refunds are what an
// account chain makes of them: a transaction signed at the refund wallet's next nonce, mined in
// nonce order at most once, dropped for good once another transaction spent its nonce, reverted
// (nothing moves, the nonce is spent) when the wallet holds too little; a send may time out (not
// broadcast) or lose its receipt (mined, the answer never arrives). Each pays a fee: one below the
// going fee (tests raise it) waits unmined until it is replaced at its nonce by one paying at least
// a tenth more, or the fee falls; a replacement may go unseen by the miners, who then mine the one
// it replaced. Nothing here dedupes a refund by what it is for: a second transaction signed for the
// same payment would be paid twice.
import { createHash, randomBytes } from "node:crypto"
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig, type X402Config } from "../../services/platform/AppConfig.js"
import {
  Chain,
  ChainUnavailable,
  Facilitator,
  FacilitatorUnavailable,
  type RefundState,
  Refunds
} from "../../services/x402/ports.js"
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
  /** The EIP-3009 nonce of a settle; the refund wallet's account nonce of a refund. */
  readonly nonce: string | null
}

/** What the next settle does instead of answering: nothing moves (timeout), or it moves and the answer is lost. */
export type SettleFault = "timeout" | "lost"

/** What the next refund send does instead of answering: not broadcast (timeout), or mined and its receipt lost. */
export type RefundFault = "timeout" | "lost"

/** A refund transaction as signed: what `raw` carries on the simulated chain. */
interface SimulatedRefundTx {
  readonly asset: string
  readonly to: string
  readonly amount: string
  readonly nonce: number
  /** What it pays to be mined: it is mined only while the chain's going fee is no higher. */
  readonly fee: number
}

/** A fee raised by an eighth, rounded up (a replacement's). */
const raisedFee = (fee: number) => fee + Math.ceil(fee / 8)

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
  /** The refund wallet's transactions mined so far (its account nonce); a mined hash → whether it succeeded. */
  private refundNonce = 0
  private readonly refundsMined = new Map<string, boolean>()
  /** Broadcast refunds waiting for an earlier nonce (the mempool), by nonce: the first one sent holds it. */
  private readonly mempool = new Map<number, { readonly hash: string; readonly tx: SimulatedRefundTx }>()
  private refundFaults: Array<RefundFault> = []
  /** The fee miners take now: a refund paying less waits in the mempool (stuck) until it is replaced or the fee falls. */
  private goingFee = 1
  /** Replacements the miners never see (they keep mining the refund replaced), counted down. */
  private replacementsUnseen = 0
  /** Refund transactions signed (sent or not). */
  refundsSigned = 0
  /** While set, refund signatures (or sends) wait for it (a test holds several passes at the same step). */
  private readonly gates = new Map<"sign" | "send", { promise: Promise<void>; waiting: number }>()

  /**
   * Holds every refund signature (or send) until released: passes that run at once all reach that
   * step before any goes further — the interleaving a slow chain and two processes produce.
   */
  holdRefunds(step: "sign" | "send"): { readonly waiting: () => number; readonly release: () => void } {
    let release!: () => void
    const gate = { promise: new Promise<void>((resolve) => (release = resolve)), waiting: 0 }
    this.gates.set(step, gate)
    return {
      waiting: () => gate.waiting,
      release: () => {
        this.gates.delete(step)
        release()
      }
    }
  }

  /** Waits while refund signatures (or sends) are held. */
  async refundStepOpen(step: "sign" | "send"): Promise<void> {
    const gate = this.gates.get(step)
    if (gate === undefined) return
    gate.waiting++
    await gate.promise
  }

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

  private move(t: Omit<SimulatedTransfer, "transaction"> & { readonly transaction?: string }): string {
    const transaction = t.transaction ?? newHash()
    this.balances.set(lower(t.from), this.balanceOf(t.from) - t.amount)
    this.balances.set(lower(t.to), this.balanceOf(t.to) + t.amount)
    if (t.kind === "settle" && t.nonce !== null)
      this.used.set(`${lower(t.asset)}:${lower(t.from)}:${lower(t.nonce)}`, transaction)
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
      // Loaded at the first payment, not at startup (viem and @x402/evm: ~40 MB resident).
      const [{ getAddress, recoverTypedDataAddress }, { authorizationTypes }] = await viemAndEvm()
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
      nonce: a.nonce
    })
    if (fault === "lost") return fault
    return { success: true, payer: a.from, transaction, network: this.config.network, amount: a.value }
  }

  /** The next refund sends fail this way, in order (each fault once). */
  failNextRefund(...faults: ReadonlyArray<RefundFault>): void {
    this.refundFaults.push(...faults)
  }

  /** The refund wallet's next nonce as a node reports it (`pending`: counting what waits in the mempool). */
  private pendingRefundNonce(): number {
    let nonce = this.refundNonce
    while (this.mempool.has(nonce)) nonce++
    return nonce
  }

  /** The fee miners take from now on: raised, refunds signed before wait unmined; lowered, they are mined. */
  setRefundFee(fee: number): void {
    this.goingFee = fee
    this.mineRefunds()
  }

  /** The next replacement sent is never seen by the miners: they mine the refund it replaced, if they can. */
  keepNextReplacementUnseen = (): void => void this.replacementsUnseen++

  private unseen(): boolean {
    return this.replacementsUnseen > 0 && this.replacementsUnseen-- > 0
  }

  /**
   * Signs, without sending, a transfer from the refund wallet at its next nonce, at the going fee;
   * or, `replacing` a refund, at that one's nonce with a fee an eighth above its own (at least the going fee).
   */
  signRefund(input: {
    readonly asset: string
    readonly to: string
    readonly amount: bigint
    readonly replacing?: { readonly nonce: number; readonly raw: string }
  }): {
    readonly transaction: string
    readonly nonce: number
    readonly raw: string
  } {
    this.refundsSigned++
    const replaced = input.replacing === undefined ? undefined : txOf(input.replacing.raw)
    const tx: SimulatedRefundTx = {
      asset: input.asset,
      to: input.to,
      amount: input.amount.toString(),
      nonce: input.replacing?.nonce ?? this.pendingRefundNonce(),
      fee: replaced === undefined ? this.goingFee : Math.max(this.goingFee, raisedFee(replaced.fee))
    }
    // A nonce of its own makes two signatures of the same transfer at one nonce two transactions, as fees would.
    const raw = `0x${Buffer.from(JSON.stringify({ ...tx, salt: randomBytes(8).toString("hex") })).toString("hex")}`
    return { transaction: hashOf(raw), nonce: tx.nonce, raw }
  }

  /**
   * The operator's wallet sends something else at its next nonce (a transfer made by hand, a
   * replacement): a refund signed at that nonce and not yet mined can never be.
   */
  spendRefundNonce(): void {
    this.mempool.delete(this.refundNonce)
    this.refundNonce++
    this.mineRefunds()
  }

  /** Mines the mempool's refunds in nonce order while each pays the going fee: each moves the asset, or reverts (too little). */
  private mineRefunds(): void {
    const due = () => {
      const next = this.mempool.get(this.refundNonce)
      return next !== undefined && next.tx.fee >= this.goingFee ? next : undefined
    }
    for (let next = due(); next !== undefined; next = due()) {
      this.mempool.delete(this.refundNonce)
      const amount = BigInt(next.tx.amount)
      const success = this.balanceOf(this.refundWallet) >= amount
      if (success)
        this.move({
          transaction: next.hash,
          asset: next.tx.asset,
          from: this.refundWallet,
          to: next.tx.to,
          amount,
          kind: "refund",
          nonce: String(next.tx.nonce)
        })
      this.refundsMined.set(next.hash, success)
      this.refundNonce++
    }
  }

  /** Whether this refund transaction was mined and reverted (moved nothing). */
  refundReverted(transaction: string): boolean {
    return this.refundsMined.get(transaction) === false
  }

  /** Where a signed refund (and those it replaced) stands: the nonce read before the receipts, as a node is asked. */
  refundState(refund: {
    readonly transaction: string
    readonly nonce: number
    readonly replaces?: ReadonlyArray<string>
  }): RefundState {
    const spent = this.refundNonce > refund.nonce
    for (const hash of [refund.transaction, ...(refund.replaces ?? [])]) {
      const mined = this.refundsMined.get(hash)
      if (mined !== undefined) return { _tag: "Mined", success: mined, transaction: hash }
    }
    return spent ? { _tag: "Dropped" } : { _tag: "Open" }
  }

  /** Broadcasts a signed refund (again: the same transaction is kept once) and answers where it stands, or a fault. */
  sendRefund(refund: {
    readonly transaction: string
    readonly nonce: number
    readonly raw: string
    readonly replaces?: ReadonlyArray<string>
  }) {
    const fault = this.refundFaults.shift()
    if (fault === "timeout") return fault
    const tx = txOf(refund.raw)
    const hash = hashOf(refund.raw)
    if (hash !== refund.transaction || tx.nonce !== refund.nonce) throw new Error("a refund whose hash is not its own")
    const waiting = this.mempool.get(tx.nonce)
    // Taken at a free nonce, or replacing what waits there for a tenth more fee (unless unseen by the miners).
    const takes =
      waiting === undefined || (waiting.hash !== hash && tx.fee * 10 >= waiting.tx.fee * 11 && !this.unseen())
    if (!this.refundsMined.has(hash) && tx.nonce >= this.refundNonce && takes) this.mempool.set(tx.nonce, { hash, tx })
    this.mineRefunds()
    if (fault === "lost") return fault
    return this.refundState(refund)
  }
}

const viemAndEvm = () => Promise.all([import("viem"), import("@x402/evm")])
const hashOf = (raw: string) => `0x${createHash("sha256").update(raw).digest("hex")}`
const txOf = (raw: string) => JSON.parse(Buffer.from(raw.slice(2), "hex").toString("utf8")) as SimulatedRefundTx

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
        now: Effect.sync(() => chain.clock()),
        transfersIn: ({ transaction, asset }) =>
          Effect.sync(() => {
            const moved = chain.transfers.filter((t) => t.transaction === transaction)
            if (moved.length === 0) return chain.refundReverted(transaction) ? [] : null
            return moved
              .filter((t) => lower(t.asset) === lower(asset))
              .map((t) => ({ from: lower(t.from), to: lower(t.to), value: t.amount }))
          })
      })
    )
  ),
  Layer.effect(
    Refunds,
    Effect.map(SimulatedChainRef, (chain) =>
      Refunds.of({
        sign: (input) =>
          input.amount <= 0n
            ? Effect.fail(new ChainUnavailable({ reason: "a refund moves a positive amount" }))
            : Effect.promise(() => chain.refundStepOpen("sign")).pipe(Effect.map(() => chain.signRefund(input))),
        send: (refund) =>
          Effect.flatMap(
            Effect.promise(() => chain.refundStepOpen("send")).pipe(Effect.map(() => chain.sendRefund(refund))),
            (state) =>
              state === "timeout"
                ? Effect.fail(new ChainUnavailable({ reason: "the node did not answer in time" }))
                : state === "lost"
                  ? Effect.fail(new ChainUnavailable({ reason: "the refund's receipt was lost" }))
                  : Effect.succeed(state)
          )
      })
    )
  )
).pipe(Layer.provideMerge(SimulatedChainLive))
