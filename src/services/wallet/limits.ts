// The spending-policy checks a purchase (or another wallet debit) passes inside its unit of work,
// after the wallet lock: the freeze, the allow-lists, the per-transaction, daily and monthly limits (against
// what was spent plus what running sagas hold) and the approval the autonomy level asks for.
import { Clock, Effect } from "effect"
import { PolicyViolation, type WalletPolicy } from "../../schema/commerce/wallets.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { approvalNeeded, type PurchaseCheck, utcDayStart, utcMonthStart } from "../../schema/wallet/policy.js"
import type { WalletStoreService } from "./WalletStore.js"

/** The 403 every debit of a frozen wallet gets: it names the freeze and who lifts it. */
export const frozenRefusal = (attemptedCents: number) =>
  new PolicyViolation({
    message:
      "the agent's wallet is frozen by its owner: no purchase or other debit is allowed until the owner unfreezes it (dashboard)",
    policy: "frozen",
    limitCents: null,
    attemptedCents
  })

export const makeLimits = (store: WalletStoreService) => {
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

  return { checkLimits, authorize } as const
}
