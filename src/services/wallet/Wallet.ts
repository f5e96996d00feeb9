// Wallet: an agent's credit balance (the ledger balance of wallet:<agentId>, in cents), its
// spending policies and autonomy level, fake-mode top-ups, low-balance warnings and auto-recharge.
import { Clock, Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { isTagged } from "effect/Predicate"
import { AppConfig } from "../platform/AppConfig.js"
import { cents } from "../../schema/platform/common.js"
import { CREDIT_UNIT, CURRENCY } from "../../schema/commerce/common.js"
import {
  InsufficientCredits,
  PolicyViolation,
  type UpdateWalletBody,
  type WalletPolicy,
  type WalletView
} from "../../schema/commerce/wallets.js"
import { Conflict, Forbidden, InvalidInput } from "../../schema/platform/errors.js"
import { EXTERNAL_GRANTS, type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import { traced } from "../platform/Tracing.js"
import { atomically, Ids } from "../platform/Db.js"
import { initialWallet, loosens, type PurchaseCheck, utcDayStart, utcMonthStart } from "../../schema/wallet/policy.js"
import { type RechargeRequest, WalletStore } from "./WalletStore.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../idempotency/Idempotency.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"

/** A grant from external:grants is balanced and debits an account that may go negative: its errors are bugs. */
const grantCannotFail = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (e): e is Extract<E, InsufficientFunds | InvalidInput> => isTagged(e, "InsufficientFunds") || isTagged(e, "InvalidInput"), (e) => Effect.die(e)) as Effect.Effect<
    A,
    Exclude<E, InsufficientFunds | InvalidInput>,
    R
  >

export class Wallet extends Context.Service<Wallet>()("Wallet", {
  make: Effect.gen(function* () {
    const store = yield* WalletStore
    const ledger = yield* Ledger
    const events = yield* Events
    const ids = yield* Ids
    const config = yield* AppConfig

    const initial = initialWallet

    const howToFund = {
      topupUrl: config.payments === "fake" ? `${config.baseUrl}/api/v1/agent/commerce/wallet/topup` : null,
      checkoutUrl: `${config.baseUrl}/api/trpc/subscription.createCheckout`,
      rechargeUrl: null,
      note:
        config.payments === "fake"
          ? "POST {amountCents} to topupUrl (fake-payments mode), or buy a plan: its credits fund the wallet (1 credit = 1 cent)"
          : "buy a plan through checkoutUrl (its credits fund the wallet, 1 credit = 1 cent), or enable auto-recharge with PATCH /wallet",
      retry: "after funding, send the same request again; the same Idempotency-Key is fine: a 402 is never stored for replay"
    }

    /** The 402 a purchase answers when the buyer's wallet cannot cover the price. */
    const insufficientCredits = (e: InsufficientFunds) =>
      new InsufficientCredits({
        message: `the wallet holds ${e.balanceCents} cents; ${e.requiredCents} are needed (${e.missingCents} missing)`,
        requiredCents: e.requiredCents,
        balanceCents: e.balanceCents,
        missingCents: e.missingCents,
        howToFund
      })

    const spent = (agentId: string, now: number) =>
      Effect.all({
        today: store.spentSince(agentId, new Date(utcDayStart(now)).toISOString()),
        month: store.spentSince(agentId, new Date(utcMonthStart(now)).toISOString()),
        held: store.heldCents(agentId)
      })

    const remaining = (limit: number | null, used: number) => (limit === null ? null : cents(Math.max(0, limit - used)))

    const view = Effect.fnUntraced(function* (agentId: string) {
      const now = yield* Clock.currentTimeMillis
      const wallet = (yield* store.get(agentId)) ?? initial(agentId, now)
      const balance = yield* ledger.balance(walletAccount(agentId))
      const used = yield* spent(agentId, now)
      const view: WalletView = {
        agentId,
        balanceCents: cents(balance),
        currency: CURRENCY,
        creditUnit: CREDIT_UNIT,
        policies: wallet.policy,
        autonomyLevel: wallet.policy.autonomyLevel,
        spentTodayCents: cents(used.today),
        spentThisMonthCents: cents(used.month),
        heldCents: cents(used.held),
        remainingTodayCents: remaining(wallet.policy.dailyLimitCents, used.today + used.held),
        remainingThisMonthCents: remaining(wallet.policy.monthlyLimitCents, used.month + used.held),
        pendingApprovals: yield* store.countPendingApprovals(agentId, new Date(now).toISOString()),
        updatedAt: wallet.updatedAt
      }
      return view
    }, traced("Wallet.view"))

    const policyOf = (agentId: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.map(store.get(agentId), (w) => (w ?? initial(agentId, now)).policy))

    /**
     * Changes the policy. An agent's own key may only tighten it; loosening (a higher or removed
     * limit, a wider allow-list, a higher threshold or autonomy, more auto-recharge) is the
     * account owner's, through the dashboard (`byOwner`).
     */
    const updatePolicy = Effect.fnUntraced(function* (agentId: string, body: UpdateWalletBody, options: { readonly byOwner: boolean } = { byOwner: false }) {
      yield* atomically(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const wallet = yield* store.lock(initial(agentId, now))
          const p = wallet.policy
          const pick = <K extends keyof WalletPolicy>(k: K): WalletPolicy[K] => (body[k as keyof UpdateWalletBody] !== undefined ? (body[k as keyof UpdateWalletBody] as WalletPolicy[K]) : p[k])
          const policy: WalletPolicy = {
            perTransactionLimitCents: pick("perTransactionLimitCents"),
            dailyLimitCents: pick("dailyLimitCents"),
            monthlyLimitCents: pick("monthlyLimitCents"),
            allowedCategories: pick("allowedCategories"),
            allowedSellers: pick("allowedSellers"),
            approvalThresholdCents: pick("approvalThresholdCents"),
            autonomyLevel: pick("autonomyLevel"),
            autoRecharge: {
              enabled: body.autoRecharge?.enabled ?? p.autoRecharge.enabled,
              thresholdCents: body.autoRecharge?.thresholdCents ?? p.autoRecharge.thresholdCents,
              amountCents: body.autoRecharge?.amountCents ?? p.autoRecharge.amountCents
            }
          }
          const loosened = options.byOwner ? null : loosens(p, policy)
          if (loosened !== null) {
            return yield* Effect.fail(
              new Forbidden({ message: `an agent key may only tighten its wallet policy; loosening ${loosened} is for the account owner (dashboard)`, permission: "owner" })
            )
          }
          if (policy.dailyLimitCents !== null && policy.monthlyLimitCents !== null && policy.dailyLimitCents > policy.monthlyLimitCents) {
            return yield* Effect.fail(new InvalidInput({ message: "dailyLimitCents cannot exceed monthlyLimitCents", field: "dailyLimitCents" }))
          }
          yield* store.put({ ...wallet, policy, updatedAt: new Date(now).toISOString() })
        })
      )
      return yield* view(agentId)
    }, traced("Wallet.updatePolicy"))

    /** Fake-payments mode only: credits the wallet from external:grants (a `grant` entry). */
    const topup = Effect.fnUntraced(function* (agentId: string, amountCents: number) {
      if (config.payments !== "fake") {
        return yield* Effect.fail(
          new Conflict({ message: "top-up is only available in fake-payments mode; fund the wallet through a plan checkout or a recharge", state: `payments:${config.payments}` })
        )
      }
      // A keyed top-up is credited once per key: a retry whose first attempt committed but lost its
      // answer (a database failover between the commit and the reply) finds the entry instead.
      const key = yield* currentIdempotencyKey
      const reference =
        key === undefined ? `topup:${agentId}:${yield* ids.make("tu")}` : `topup:${agentId}:tu_k${createHash("sha256").update(`${yield* currentIdempotencyScope}|${key}`).digest("hex").slice(0, 32)}`
      const earlier = key === undefined ? undefined : (yield* ledger.entriesByReference(reference))[0]
      const entry = earlier ?? (yield* ledger.transfer({ kind: "grant", reference, memo: "fake-payments top-up", from: EXTERNAL_GRANTS, to: walletAccount(agentId), amount: amountCents }))
      return { agentId, amountCents: cents(amountCents), balanceCents: cents(yield* ledger.balance(walletAccount(agentId))), entryId: entry.id }
    }, atomically, grantCannotFail, traced("Wallet.topup"))

    /**
     * Auto-recharge hook. Fake payments: credited at once (a grant) and wallet.recharged is
     * emitted. Otherwise a `requested` row waits for the payments layer to charge the owner.
     */
    const requestRecharge = Effect.fnUntraced(function* (agentId: string, amountCents: number, reason: string) {
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const id = yield* ids.make("rch")
        if (config.payments === "fake") {
          const entry = yield* ledger.transfer({ kind: "grant", reference: id, memo: `auto-recharge: ${reason}`, from: EXTERNAL_GRANTS, to: walletAccount(agentId), amount: amountCents })
          const request: RechargeRequest = { id, agentId, amountCents, reason, status: "granted", ledgerEntryId: entry.id, createdAt: now }
          yield* store.insertRecharge(request)
          yield* events.emit(agentId, "wallet.recharged", {
            rechargeId: id,
            amountCents,
            balanceCents: yield* ledger.balance(walletAccount(agentId)),
            automatic: true
          })
          return request
        }
        const request: RechargeRequest = { id, agentId, amountCents, reason, status: "requested", ledgerEntryId: null, createdAt: now }
        yield* store.insertRecharge(request)
        return request
      }, atomically, grantCannotFail, traced("Wallet.requestRecharge"))

    /**
     * Inside the purchase's unit of work, after `lock` (which serialises one agent's purchases):
     * applies the spending policies and says whether the purchase must wait for the owner.
     */
    const lock = (agentId: string) => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.map(store.lock(initial(agentId, now)), (w) => w.policy))

    /**
     * `lock` for a purchase from the wallet: also locks the wallet's ledger balance and returns it,
     * to be handed to the settlement (`from: { _tag: "wallet", lockedBalanceCents }`), which then
     * spends no statement locking it again.
     */
    const lockForPurchase = (agentId: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.map(store.lockForPurchase(initial(agentId, now)), (r) => ({ policy: r.wallet.policy, balanceCents: r.balanceCents })))

    /**
     * The amount limits, in the caller's unit of work after the wallet lock: the per-transaction
     * limit, and the daily and monthly limits against what was spent in the window plus what is
     * held (running sagas' escrow), so that spent + held never passes a limit.
     */
    const checkLimits = Effect.fnUntraced(function* (agentId: string, p: WalletPolicy, priceCents: number) {
      const refuse = (policy: PolicyViolation["policy"], message: string, limitCents: number | null) =>
        Effect.fail(new PolicyViolation({ message, policy, limitCents, attemptedCents: priceCents }))
      if (p.perTransactionLimitCents !== null && priceCents > p.perTransactionLimitCents) {
        return yield* refuse("perTransactionLimit", `${priceCents} cents is over the per-transaction limit of ${p.perTransactionLimitCents} cents`, p.perTransactionLimitCents)
      }
      if (p.dailyLimitCents === null && p.monthlyLimitCents === null) return
      const now = yield* Clock.currentTimeMillis
      const held = yield* store.heldCents(agentId)
      const heldNote = held > 0 ? ` (including ${held} held in escrow by running sagas)` : ""
      if (p.dailyLimitCents !== null) {
        const today = (yield* store.spentSince(agentId, new Date(utcDayStart(now)).toISOString())) + held
        if (today + priceCents > p.dailyLimitCents) {
          return yield* refuse("dailyLimit", `${today} cents spent today${heldNote}; ${priceCents} more would pass the daily limit of ${p.dailyLimitCents} cents`, p.dailyLimitCents)
        }
      }
      if (p.monthlyLimitCents !== null) {
        const month = (yield* store.spentSince(agentId, new Date(utcMonthStart(now)).toISOString())) + held
        if (month + priceCents > p.monthlyLimitCents) {
          return yield* refuse("monthlyLimit", `${month} cents spent this month${heldNote}; ${priceCents} more would pass the monthly limit of ${p.monthlyLimitCents} cents`, p.monthlyLimitCents)
        }
      }
    })

    const authorize = Effect.fnUntraced(function* (agentId: string, p: WalletPolicy, purchase: PurchaseCheck, options: { readonly approved: boolean }) {
      const refuse = (policy: PolicyViolation["policy"], message: string, limitCents: number | null) =>
        Effect.fail(new PolicyViolation({ message, policy, limitCents, attemptedCents: purchase.priceCents }))
      if (p.allowedSellers !== null && !p.allowedSellers.includes(purchase.sellerAgentId)) {
        return yield* refuse("allowedSellers", `seller ${purchase.sellerAgentId} is not in the wallet's allowedSellers`, null)
      }
      if (p.allowedCategories !== null && !p.allowedCategories.includes(purchase.category)) {
        return yield* refuse("allowedCategories", `category ${purchase.category} is not in the wallet's allowedCategories`, null)
      }
      yield* checkLimits(agentId, p, purchase.priceCents)
      const approval: "manual" | "approvalThreshold" | null = options.approved
        ? null
        : p.autonomyLevel === "manual"
          ? "manual"
          : p.autonomyLevel === "semi_auto" && purchase.priceCents > p.approvalThresholdCents
            ? "approvalThreshold"
            : null
      return approval
    })

    /**
     * A wallet debit that is not a purchase (an investment, a project's creation charge), inside the
     * caller's unit of work: locks the wallet (serialising it with the agent's purchases), checks the
     * amount limits (PolicyViolation) and counts the amount as spend of the day. The allow-lists and
     * the autonomy level are about sellers and purchases and do not apply. Call it before the debit.
     */
    const debitOutsidePurchase = Effect.fnUntraced(function* (agentId: string, amountCents: number) {
      const now = yield* Clock.currentTimeMillis
      const p = (yield* store.lock(initial(agentId, now))).policy
      yield* checkLimits(agentId, p, amountCents)
      yield* store.addSpend(agentId, new Date(now).toISOString(), amountCents)
      return p
    })

    /** After a debit, inside its unit of work: low-balance warning when the balance crosses the threshold, then auto-recharge. */
    const afterDebit = Effect.fnUntraced(function* (agentId: string, policy: WalletPolicy, beforeCents: number, afterCents: number) {
      const threshold = policy.autoRecharge.thresholdCents
      if (threshold <= 0 || afterCents >= threshold || beforeCents < threshold) return
      yield* events.emit(agentId, "wallet.low_balance", { balanceCents: afterCents, thresholdCents: threshold, autoRecharge: policy.autoRecharge.enabled })
      if (policy.autoRecharge.enabled) yield* requestRecharge(agentId, policy.autoRecharge.amountCents, `balance ${afterCents} fell below ${threshold}`)
    })

    return {
      view,
      policyOf,
      updatePolicy,
      topup,
      requestRecharge,
      listRequestedRecharges: store.listRequestedRecharges,
      lock,
      lockForPurchase,
      authorize,
      debitOutsidePurchase,
      /** A debit counted by debitOutsidePurchase was given back (a failed build's refund): off the spend of its day. */
      giveBackSpend: (agentId: string, atIso: string, cents: number) => store.addSpend(agentId, atIso, -cents),
      afterDebit,
      insufficientCredits,
      howToFund,
      balance: (agentId: string) => ledger.balance(walletAccount(agentId))
    } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Wallet, Wallet.make).pipe(Layer.provide([Events.layer, Ledger.layer]))
}
