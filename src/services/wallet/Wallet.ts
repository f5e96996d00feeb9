// Wallet: an agent's credit balance (the ledger balance of wallet:<agentId>, in cents), its
// spending policies and autonomy level, fake-mode top-ups, low-balance warnings and auto-recharge.
// The spending-policy checks a purchase (or another wallet debit) passes inside its unit of work,
// after the wallet lock, are `authorize` and `checkLimits` here: the freeze, the allow-lists, the
// per-transaction, daily and monthly limits (against what was spent plus what running sagas hold)
// and the approval the autonomy level asks for. Funding's pure rules (the 402's hints, a keyed
// top-up's reference): funding.ts.
import { Clock, Context, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { type Cents, cents } from "../../schema/platform/common.js"
import { CREDIT_UNIT, CURRENCY } from "../../schema/commerce/common.js"
import {
  type HowToFund,
  type InsufficientCredits,
  PolicyViolation,
  type UpdateWalletBody,
  type WalletPolicy,
  type WalletView
} from "../../schema/commerce/wallets.js"
import type { IdempotencyKeyReused, StorageUnavailable } from "../../schema/platform/errors.js"
import { Conflict, Forbidden, InvalidInput } from "../../schema/platform/errors.js"
import { EXTERNAL_GRANTS, type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import { traced } from "../platform/Tracing.js"
import { Ids, Transactor } from "../platform/Db.js"
import {
  applyPolicyUpdate,
  approvalNeeded,
  initialWallet,
  loosens,
  type PurchaseCheck,
  utcDayStart,
  utcMonthStart
} from "../../schema/wallet/policy.js"
import { type RechargeRequest, WalletStore, type WalletStoreService } from "./WalletStore.js"
import { Audit } from "../audit/Audit.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import {
  grantCannotFail,
  howToFundOn,
  type IdempotencyKey,
  insufficientCreditsOf,
  keyedTopupReference
} from "./funding.js"

/** The 403 every debit of a frozen wallet gets: it names the freeze and who lifts it. */
const frozenRefusal = (attemptedCents: number) =>
  new PolicyViolation({
    message:
      "the agent's wallet is frozen by its owner: no purchase or other debit is allowed until the owner unfreezes it (dashboard)",
    policy: "frozen",
    limitCents: null,
    attemptedCents
  })

export interface TopupResult {
  readonly agentId: string
  readonly amountCents: Cents
  readonly balanceCents: Cents
  readonly entryId: string
}

export interface PolicyUpdateOptions {
  readonly byOwner: boolean
  readonly actorId?: string | undefined
  readonly keyed?: KeyedRequest | undefined
}

export interface WalletService {
  readonly view: (agentId: string) => Effect.Effect<WalletView, StorageUnavailable>
  readonly policyOf: (agentId: string) => Effect.Effect<WalletPolicy, StorageUnavailable>
  /**
   * Changes the policy. An agent's own key may only tighten it; loosening (a higher or removed
   * limit, a wider allow-list, a higher threshold or autonomy, more auto-recharge) is the
   * account owner's, through the dashboard (`byOwner`). The change is audited with who made it
   * (`actorId`: the owner's account or the agent's key) in the same unit of work. A keyed change
   * (`keyed`: the request's Idempotency-Key) is applied once: its retry answers the wallet as it
   * stands, and never undoes a change made in between.
   */
  readonly updatePolicy: (
    agentId: string,
    body: UpdateWalletBody,
    options?: PolicyUpdateOptions
  ) => Effect.Effect<WalletView, Forbidden | InvalidInput | IdempotencyKeyReused | StorageUnavailable>
  /**
   * Fake-payments mode only: credits the wallet from external:grants (a `grant` entry). A keyed
   * top-up (the request's Idempotency-Key and its caller) is credited once per key.
   */
  readonly topup: (
    agentId: string,
    amountCents: number,
    idempotency?: IdempotencyKey
  ) => Effect.Effect<TopupResult, Conflict | StorageUnavailable>
  /**
   * Auto-recharge hook. Fake payments: credited at once (a grant) and wallet.recharged is
   * emitted. Otherwise a `requested` row waits for the payments layer to charge the owner.
   */
  readonly requestRecharge: (
    agentId: string,
    amountCents: number,
    reason: string
  ) => Effect.Effect<RechargeRequest, StorageUnavailable>
  readonly listRequestedRecharges: WalletStoreService["listRequestedRecharges"]
  /**
   * Inside the purchase's unit of work, after `lock` (which serialises one agent's purchases):
   * applies the spending policies and says whether the purchase must wait for the owner.
   */
  readonly lock: (agentId: string) => Effect.Effect<WalletPolicy, StorageUnavailable>
  /**
   * `lock` for a purchase from the wallet: also locks the wallet's ledger balance and returns it,
   * to be handed to the settlement (`from: { _tag: "wallet", lockedBalanceCents }`), which then
   * spends no statement locking it again.
   */
  readonly lockForPurchase: (
    agentId: string
  ) => Effect.Effect<{ readonly policy: WalletPolicy; readonly balanceCents: number }, StorageUnavailable>
  readonly authorize: (
    agentId: string,
    p: WalletPolicy,
    purchase: PurchaseCheck,
    options: { readonly approved: boolean }
  ) => Effect.Effect<"manual" | "approvalThreshold" | null, PolicyViolation | StorageUnavailable>
  /**
   * A wallet debit that is not a purchase (an investment, a project's creation charge), inside the
   * caller's unit of work: locks the wallet (serialising it with the agent's purchases), checks the
   * amount limits (PolicyViolation) and counts the amount as spend of the day. The allow-lists and
   * the autonomy level are about sellers and purchases and do not apply. Call it before the debit.
   */
  readonly debitOutsidePurchase: (
    agentId: string,
    amountCents: number
  ) => Effect.Effect<WalletPolicy, PolicyViolation | StorageUnavailable>
  /** A debit counted by debitOutsidePurchase was given back (a failed build's refund): off the spend of its day. */
  readonly giveBackSpend: (agentId: string, atIso: string, cents: number) => Effect.Effect<void, StorageUnavailable>
  /** After a debit, inside its unit of work: low-balance warning when the balance crosses the threshold, then auto-recharge. */
  readonly afterDebit: (
    agentId: string,
    policy: WalletPolicy,
    beforeCents: number,
    afterCents: number
  ) => Effect.Effect<void, StorageUnavailable>
  /** The 402 a purchase answers when the buyer's wallet cannot cover the price. */
  readonly insufficientCredits: (e: InsufficientFunds) => InsufficientCredits
  readonly howToFund: typeof HowToFund.Type
  readonly balance: (agentId: string) => Effect.Effect<number, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* WalletStore
  const ledger = yield* Ledger
  const audit = yield* Audit
  const events = yield* Events
  const ids = yield* Ids
  const config = yield* AppConfig
  const { atomically } = yield* Transactor
  const receipts = yield* WriteReceipts

  const howToFund = howToFundOn(config)

  const spent = (agentId: string, now: number) =>
    Effect.all({
      today: store.spentSince(agentId, new Date(utcDayStart(now)).toISOString()),
      month: store.spentSince(agentId, new Date(utcMonthStart(now)).toISOString()),
      held: store.heldCents(agentId)
    })

  const remaining = (limit: number | null, used: number) => (limit === null ? null : cents(Math.max(0, limit - used)))

  const view = Effect.fnUntraced(function* (agentId: string) {
    const now = yield* Clock.currentTimeMillis
    const wallet = (yield* store.get(agentId)) ?? initialWallet(agentId, now)
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
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.map(store.get(agentId), (w) => (w ?? initialWallet(agentId, now)).policy)
    )

  const updatePolicy = Effect.fnUntraced(function* (
    agentId: string,
    body: UpdateWalletBody,
    options: PolicyUpdateOptions = { byOwner: false }
  ) {
    const write = atomically(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const wallet = yield* store.lock(initialWallet(agentId, now))
        const policy = applyPolicyUpdate(wallet.policy, body)
        const loosened = options.byOwner ? null : loosens(wallet.policy, policy)
        if (loosened !== null) {
          const message = `an agent key may only tighten its wallet policy; loosening ${loosened} is for the account owner (dashboard)`
          return yield* Effect.fail(new Forbidden({ message, permission: "owner" }))
        }
        const { dailyLimitCents: daily, monthlyLimitCents: monthly } = policy
        if (daily !== null && monthly !== null && daily > monthly) {
          const message = "dailyLimitCents cannot exceed monthlyLimitCents"
          return yield* Effect.fail(new InvalidInput({ message, field: "dailyLimitCents" }))
        }
        yield* store.put({ ...wallet, policy, updatedAt: new Date(now).toISOString() })
        const actor = { kind: options.byOwner ? "owner" : "agent_key", id: options.actorId ?? null } as const
        yield* audit.policyChanged(agentId, actor, wallet.policy, policy)
        return agentId
      })
    )
    // With its write receipt: a retry whose answer was lost must not apply the body again over a
    // change made since (the owner's, or another of the agent's).
    yield* receipts.once({
      keyed: options.keyed,
      kind: "wallet.policy",
      request: { agentId, body, byOwner: options.byOwner },
      write,
      idOf: (id) => id,
      replay: (id) => Effect.succeed(id)
    })
    return yield* view(agentId)
  }, traced("Wallet.updatePolicy"))

  const lock = (agentId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.map(store.lock(initialWallet(agentId, now)), (w) => w.policy)
    )

  const lockForPurchase = (agentId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.map(store.lockForPurchase(initialWallet(agentId, now)), (r) => ({
        policy: r.wallet.policy,
        balanceCents: r.balanceCents
      }))
    )

  /**
   * The amount limits, in the caller's unit of work after the wallet lock: the per-transaction
   * limit, and the daily and monthly limits against what was spent in the window plus what is
   * held (running sagas' escrow), so that spent + held never passes a limit.
   */
  const checkLimits = Effect.fnUntraced(function* (agentId: string, p: WalletPolicy, priceCents: number) {
    const refuse = (policy: PolicyViolation["policy"], message: string, limitCents: number | null) =>
      Effect.fail(new PolicyViolation({ message, policy, limitCents, attemptedCents: priceCents }))
    if (p.frozen) return yield* Effect.fail(frozenRefusal(priceCents))
    if (p.perTransactionLimitCents !== null && priceCents > p.perTransactionLimitCents) {
      const limit = p.perTransactionLimitCents
      return yield* refuse(
        "perTransactionLimit",
        `${priceCents} cents is over the per-transaction limit of ${limit} cents`,
        limit
      )
    }
    if (p.dailyLimitCents === null && p.monthlyLimitCents === null) return
    const now = yield* Clock.currentTimeMillis
    const held = yield* store.heldCents(agentId)
    const heldNote = held > 0 ? ` (including ${held} held in escrow by running sagas)` : ""
    if (p.dailyLimitCents !== null) {
      const today = (yield* store.spentSince(agentId, new Date(utcDayStart(now)).toISOString())) + held
      if (today + priceCents > p.dailyLimitCents) {
        const limit = p.dailyLimitCents
        const message = `${today} cents spent today${heldNote}; ${priceCents} more would pass the daily limit of ${limit} cents`
        return yield* refuse("dailyLimit", message, limit)
      }
    }
    if (p.monthlyLimitCents !== null) {
      const month = (yield* store.spentSince(agentId, new Date(utcMonthStart(now)).toISOString())) + held
      if (month + priceCents > p.monthlyLimitCents) {
        const limit = p.monthlyLimitCents
        const message = `${month} cents spent this month${heldNote}; ${priceCents} more would pass the monthly limit of ${limit} cents`
        return yield* refuse("monthlyLimit", message, limit)
      }
    }
  })

  /** A purchase's policy check: the allow-lists, the limits, then the approval it needs (or null). */
  const authorize = Effect.fnUntraced(function* (
    agentId: string,
    p: WalletPolicy,
    purchase: PurchaseCheck,
    options: { readonly approved: boolean }
  ): Effect.fn.Return<"manual" | "approvalThreshold" | null, PolicyViolation | StorageUnavailable> {
    const refuse = (policy: PolicyViolation["policy"], message: string) =>
      Effect.fail(new PolicyViolation({ message, policy, limitCents: null, attemptedCents: purchase.priceCents }))
    if (p.frozen) return yield* Effect.fail(frozenRefusal(purchase.priceCents))
    if (p.allowedSellers !== null && !p.allowedSellers.includes(purchase.sellerAgentId)) {
      return yield* refuse("allowedSellers", `seller ${purchase.sellerAgentId} is not in the wallet's allowedSellers`)
    }
    if (p.allowedCategories !== null && !p.allowedCategories.includes(purchase.category)) {
      return yield* refuse(
        "allowedCategories",
        `category ${purchase.category} is not in the wallet's allowedCategories`
      )
    }
    yield* checkLimits(agentId, p, purchase.priceCents)
    return approvalNeeded(p, purchase.priceCents, options.approved)
  })

  const debitOutsidePurchase = Effect.fnUntraced(function* (agentId: string, amountCents: number) {
    const now = yield* Clock.currentTimeMillis
    const p = (yield* store.lock(initialWallet(agentId, now))).policy
    yield* checkLimits(agentId, p, amountCents)
    yield* store.addSpend(agentId, new Date(now).toISOString(), amountCents)
    return p
  })

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
    giveBackSpend: (agentId: string, atIso: string, cents: number) => store.addSpend(agentId, atIso, -cents),
    afterDebit,
    insufficientCredits: (e: InsufficientFunds) => insufficientCreditsOf(howToFund, e),
    howToFund,
    balance: (agentId: string) => ledger.balance(walletAccount(agentId))
  } satisfies WalletService
})

export class Wallet extends Context.Service<Wallet, WalletService>()("agent-commerce/Wallet") {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Wallet, make).pipe(
    Layer.provide([Events.layer, Ledger.layer, Audit.layer, WriteReceipts.layer])
  )
}
