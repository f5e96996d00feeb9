// The x402 domain's ports: the facilitator that verifies and settles a payment (the x402
// facilitator API), the chain the operator reads (was an authorization used?) and refunds on.
// Adapters: src/layers/x402/ (HTTP facilitator, viem chain, and the honest simulation of both).
import { Context, Data, type Effect } from "effect"
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse
} from "../../schema/x402/x402.js"

/**
 * The facilitator could not be asked, or did not answer in time, or answered something that is not
 * the facilitator API's answer. For /settle this means the outcome is unknown: the payment is kept
 * `settlement_pending` and reconciled, never answered with a fresh 402.
 */
export class FacilitatorUnavailable extends Data.TaggedError("FacilitatorUnavailable")<{
  readonly operation: "verify" | "settle" | "supported"
  readonly reason: string
}> {}

export interface FacilitatorService {
  /** POST {url}/verify `{x402Version, paymentPayload, paymentRequirements}`. */
  readonly verify: (
    payload: PaymentPayload,
    requirements: PaymentRequirements
  ) => Effect.Effect<VerifyResponse, FacilitatorUnavailable>
  /** POST {url}/settle: the transfer on the chain, or why not (`success: false`). */
  readonly settle: (
    payload: PaymentPayload,
    requirements: PaymentRequirements
  ) => Effect.Effect<SettleResponse, FacilitatorUnavailable>
  /** GET {url}/supported. */
  readonly supported: Effect.Effect<SupportedResponse, FacilitatorUnavailable>
}

export class Facilitator extends Context.Service<Facilitator, FacilitatorService>()("agent-commerce/X402Facilitator") {}

/** The chain could not be read or written. */
export class ChainUnavailable extends Data.TaggedError("ChainUnavailable")<{ readonly reason: string }> {}

/** Whether an EIP-3009 authorization was used on the chain, and by which transaction when known. */
export type AuthorizationState =
  { readonly _tag: "Unused" } | { readonly _tag: "Used"; readonly transaction: string | null }

export interface ChainService {
  /** The token's `authorizationState(authorizer, nonce)` (and the transaction that used it, when found). */
  readonly authorizationState: (input: {
    readonly asset: string
    readonly from: string
    readonly nonce: string
  }) => Effect.Effect<AuthorizationState, ChainUnavailable>
  /** The chain's time, in seconds (a block's timestamp): validBefore is judged by it. */
  readonly now: Effect.Effect<number, ChainUnavailable>
  /**
   * The transfers of `asset` a mined, successful transaction made (its ERC-20 `Transfer` logs),
   * addresses lower case; empty when it reverted, null when the chain has no such transaction.
   */
  readonly transfersIn: (input: {
    readonly transaction: string
    readonly asset: string
  }) => Effect.Effect<ReadonlyArray<ChainTransfer> | null, ChainUnavailable>
}

/** One ERC-20 transfer on the chain, addresses lower case, the value in base units. */
export interface ChainTransfer {
  readonly from: string
  readonly to: string
  readonly value: bigint
}

export class Chain extends Context.Service<Chain, ChainService>()("agent-commerce/X402Chain") {}

/**
 * A refund signed by the operator's refund wallet and not yet known to be mined: an ERC-20
 * `transfer` at one account nonce. It is recorded on the payment before it is first broadcast, so a
 * refund whose receipt is lost (a timeout, a crash) is looked up and broadcast again — the same
 * transaction, which the chain mines at most once — never signed anew while it may still be mined.
 */
export interface SignedRefund {
  /** The transaction's hash. */
  readonly transaction: string
  /** The refund wallet's account nonce it spends. */
  readonly nonce: number
  /** The signed transaction, serialized (what is broadcast, again when needed). */
  readonly raw: string
  /**
   * The earlier refunds at this nonce this one replaced with a higher fee (oldest first): the chain
   * mines at most one of them all, and any one may be it.
   */
  readonly replaces?: ReadonlyArray<string>
  /** When it was recorded (ISO): its age decides a fee bump. */
  readonly signedAt?: string
}

/**
 * Where a signed refund stands on the chain: mined (the transfer succeeded, or reverted and moved
 * nothing; `transaction` is the one of its hashes — itself or one it replaced — that was), still
 * open (none mined, its nonce not yet spent: one may still be), or dropped (none mined, and the
 * wallet's nonce moved past them: none ever can be).
 */
export type RefundState =
  | { readonly _tag: "Mined"; readonly success: boolean; readonly transaction: string }
  | { readonly _tag: "Open" }
  | { readonly _tag: "Dropped" }

export interface RefundsService {
  /**
   * Signs, without sending, a transfer of `amount` base units of `asset` from the operator's refund
   * wallet to `to`, at the wallet's next nonce. Nothing moves until it is sent.
   */
  readonly sign: (input: {
    readonly asset: string
    readonly to: string
    readonly amount: bigint
    /**
     * A refund stuck below the fee the chain takes now: the same transfer is signed at ITS nonce,
     * with fees at least an eighth above its own (what nodes ask of a replacement) and at least the
     * going fee.
     */
    readonly replacing?: SignedRefund
  }) => Effect.Effect<SignedRefund, ChainUnavailable>
  /**
   * Broadcasts the signed refund (again, when it was before: the same transaction, mined at most
   * once), waits a bounded time for it to be mined, and answers where it stands — it and the
   * refunds it replaced (`replaces`), read as one.
   */
  readonly send: (refund: SignedRefund) => Effect.Effect<RefundState, ChainUnavailable>
}

export class Refunds extends Context.Service<Refunds, RefundsService>()("agent-commerce/X402Refunds") {}
