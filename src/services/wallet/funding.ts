// How a wallet is funded: the 402's funding hints, fake-mode top-ups (once per Idempotency-Key),
// auto-recharge and the low-balance warning that triggers it.
import { Clock, Effect } from "effect"
import { createHash } from "node:crypto"
import { isTagged } from "effect/Predicate"
import { AppConfig, type AppConfigShape } from "../platform/AppConfig.js"
import { HowToFund, InsufficientCredits, type WalletPolicy } from "../../schema/commerce/wallets.js"
import { cents } from "../../schema/platform/common.js"
import { Conflict, type InvalidInput } from "../../schema/platform/errors.js"
import { EXTERNAL_GRANTS, type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { type RechargeRequest, WalletStore } from "./WalletStore.js"

/** The Idempotency-Key of a request, with the caller it belongs to. */
export interface IdempotencyKey {
  readonly key: string
  /** Who the key belongs to (a hash of the request's credential): keys of two callers never meet. */
  readonly scope: string
}

/** How to fund a wallet on this server, told with every 402. */
export const howToFundOn = (config: Pick<AppConfigShape, "baseUrl" | "payments">): typeof HowToFund.Type => ({
  topupUrl: config.payments === "fake" ? `${config.baseUrl}/api/v1/agent/commerce/wallet/topup` : null,
  checkoutUrl: `${config.baseUrl}/api/trpc/subscription.createCheckout`,
  rechargeUrl: null,
  note:
    config.payments === "fake"
      ? "POST {amountCents} to topupUrl (fake-payments mode), or buy a plan: its credits fund the wallet " +
        "(1 credit = 1 cent)"
      : "buy a plan through checkoutUrl (its credits fund the wallet, 1 credit = 1 cent), " +
        "or enable auto-recharge with PATCH /wallet",
  retry:
    "after funding, send the same request again; the same Idempotency-Key is fine: a 402 is never stored for replay"
})

/** The 402 a purchase answers when the buyer's wallet cannot cover the price. */
export const insufficientCreditsOf = (howToFund: typeof HowToFund.Type, e: InsufficientFunds) =>
  new InsufficientCredits({
    message: `the wallet holds ${e.balanceCents} cents; ${e.requiredCents} are needed (${e.missingCents} missing)`,
    requiredCents: e.requiredCents,
    balanceCents: e.balanceCents,
    missingCents: e.missingCents,
    howToFund
  })

/**
 * The ledger reference of a keyed top-up: the same for every retry of one key by one caller, so a
 * retry finds the credit its first attempt made.
 */
export const keyedTopupReference = (agentId: string, idempotency: IdempotencyKey) =>
  `topup:${agentId}:tu_k${createHash("sha256").update(`${idempotency.scope}|${idempotency.key}`).digest("hex").slice(0, 32)}`

/** A grant from external:grants is balanced and debits an account that may go negative: its errors are bugs. */
export const grantCannotFail = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, InsufficientFunds | InvalidInput> =>
      isTagged(e, "InsufficientFunds") || isTagged(e, "InvalidInput"),
    (e) => Effect.die(e)
  ) as Effect.Effect<A, Exclude<E, InsufficientFunds | InvalidInput>, R>

/** Top-ups, auto-recharge and the low-balance warning, built from the services they use. */
export const makeFunding = Effect.gen(function* () {
  const store = yield* WalletStore
  const ledger = yield* Ledger
  const events = yield* Events
  const ids = yield* Ids
  const config = yield* AppConfig
  const { atomically } = yield* Transactor

  const topup = Effect.fnUntraced(
    function* (agentId: string, amountCents: number, idempotency?: IdempotencyKey) {
      if (config.payments !== "fake") {
        const message =
          "top-up is only available in fake-payments mode; fund the wallet through a plan checkout or a recharge"
        return yield* Effect.fail(new Conflict({ message, state: `payments:${config.payments}` }))
      }
      // A keyed top-up is credited once per key: a retry whose first attempt committed but lost its
      // answer (a database failover between the commit and the reply) finds the entry instead.
      const reference =
        idempotency === undefined
          ? `topup:${agentId}:${yield* ids.make("tu")}`
          : keyedTopupReference(agentId, idempotency)
      const earlier = idempotency === undefined ? undefined : (yield* ledger.entriesByReference(reference))[0]
      const to = walletAccount(agentId)
      const entry =
        earlier ??
        (yield* ledger.transfer({
          kind: "grant",
          reference,
          memo: "fake-payments top-up",
          from: EXTERNAL_GRANTS,
          to,
          amount: amountCents
        }))
      const balanceCents = cents(yield* ledger.balance(to))
      return { agentId, amountCents: cents(amountCents), balanceCents, entryId: entry.id }
    },
    atomically,
    grantCannotFail,
    traced("Wallet.topup")
  )

  const requestRecharge = Effect.fnUntraced(
    function* (agentId: string, amountCents: number, reason: string) {
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const id = yield* ids.make("rch")
      if (config.payments === "fake") {
        const to = walletAccount(agentId)
        const memo = `auto-recharge: ${reason}`
        const entry = yield* ledger.transfer({
          kind: "grant",
          reference: id,
          memo,
          from: EXTERNAL_GRANTS,
          to,
          amount: amountCents
        })
        const request: RechargeRequest = {
          id,
          agentId,
          amountCents,
          reason,
          status: "granted",
          ledgerEntryId: entry.id,
          createdAt: now
        }
        yield* store.insertRecharge(request)
        yield* events.emit(agentId, "wallet.recharged", {
          rechargeId: id,
          amountCents,
          balanceCents: yield* ledger.balance(to),
          automatic: true
        })
        return request
      }
      const request: RechargeRequest = {
        id,
        agentId,
        amountCents,
        reason,
        status: "requested",
        ledgerEntryId: null,
        createdAt: now
      }
      yield* store.insertRecharge(request)
      return request
    },
    atomically,
    grantCannotFail,
    traced("Wallet.requestRecharge")
  )

  const afterDebit = Effect.fnUntraced(function* (
    agentId: string,
    policy: WalletPolicy,
    beforeCents: number,
    afterCents: number
  ) {
    const threshold = policy.autoRecharge.thresholdCents
    if (threshold <= 0 || afterCents >= threshold || beforeCents < threshold) return
    const autoRecharge = policy.autoRecharge.enabled
    yield* events.emit(agentId, "wallet.low_balance", {
      balanceCents: afterCents,
      thresholdCents: threshold,
      autoRecharge
    })
    if (autoRecharge) {
      yield* requestRecharge(agentId, policy.autoRecharge.amountCents, `balance ${afterCents} fell below ${threshold}`)
    }
  })

  return { topup, requestRecharge, afterDebit } as const
})
