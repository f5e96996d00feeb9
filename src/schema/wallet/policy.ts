// Wallet policy helpers: pure functions over policies and UTC day boundaries, shared by the wallet
// service, the settlement and the wallet storage adapters.
import { Effect } from "effect"
import { cents } from "../platform/common.js"
import type { UpdateWalletBody, WalletPolicy, WalletRecord } from "../commerce/wallets.js"

/** The UTC day ("YYYY-MM-DD") of an ISO instant. */
export const utcDay = (iso: string): string => new Date(iso).toISOString().slice(0, 10)

/** The day of a UTC midnight; any other instant is a programming error (the totals are per day). */
export const dayBoundary = (sinceIso: string): Effect.Effect<string> => {
  const at = new Date(sinceIso)
  const midnight =
    at.getUTCHours() === 0 && at.getUTCMinutes() === 0 && at.getUTCSeconds() === 0 && at.getUTCMilliseconds() === 0
  return midnight
    ? Effect.succeed(at.toISOString().slice(0, 10))
    : Effect.die(new Error(`spentSince needs a UTC day boundary, got ${sinceIso}`))
}

/**
 * A new agent's wallet: conservative limits from its first minute, so that a leaked or runaway key
 * cannot spend without bound before the owner has looked (the figures: docs/money.md, "Defaults").
 * The owner loosens them from the dashboard, or sets others while creating the agent.
 */
export const DEFAULT_POLICY: WalletPolicy = {
  perTransactionLimitCents: cents(2_000),
  dailyLimitCents: cents(5_000),
  monthlyLimitCents: cents(50_000),
  allowedCategories: null,
  allowedSellers: null,
  approvalThresholdCents: cents(500),
  autonomyLevel: "semi_auto",
  autoRecharge: { enabled: false, thresholdCents: cents(0), amountCents: cents(1_000) },
  frozen: false
}

/** No limits and no approvals: what an owner sets to let an agent spend freely (and what test fixtures start from). */
export const UNLIMITED_POLICY: WalletPolicy = {
  ...DEFAULT_POLICY,
  perTransactionLimitCents: null,
  dailyLimitCents: null,
  monthlyLimitCents: null,
  approvalThresholdCents: cents(10_000),
  autonomyLevel: "full_auto"
}

const DAY_MS = 86_400_000
/** Start of the UTC day / month containing `ms` (daily and monthly limits reset there). */
export const utcDayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS
export const utcMonthStart = (ms: number) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

const AUTONOMY_ORDER = { manual: 0, semi_auto: 1, full_auto: 2 } as const

/** The first field in which `next` allows more than `current` (null when it only tightens or keeps). */
export const loosens = (current: WalletPolicy, next: WalletPolicy): string | null => {
  const limit = (a: number | null, b: number | null) => a !== null && (b === null || b > a)
  const list = (a: ReadonlyArray<string> | null, b: ReadonlyArray<string> | null) =>
    a !== null && (b === null || b.some((x) => !a.includes(x)))
  if (limit(current.perTransactionLimitCents, next.perTransactionLimitCents)) return "perTransactionLimitCents"
  if (limit(current.dailyLimitCents, next.dailyLimitCents)) return "dailyLimitCents"
  if (limit(current.monthlyLimitCents, next.monthlyLimitCents)) return "monthlyLimitCents"
  if (current.frozen && !next.frozen) return "frozen"
  if (list(current.allowedCategories, next.allowedCategories)) return "allowedCategories"
  if (list(current.allowedSellers, next.allowedSellers)) return "allowedSellers"
  if (next.approvalThresholdCents > current.approvalThresholdCents) return "approvalThresholdCents"
  if (AUTONOMY_ORDER[next.autonomyLevel] > AUTONOMY_ORDER[current.autonomyLevel]) return "autonomyLevel"
  if (
    next.autoRecharge.enabled &&
    (!current.autoRecharge.enabled || next.autoRecharge.amountCents > current.autoRecharge.amountCents)
  ) {
    return "autoRecharge"
  }
  return null
}

/** What a purchase's policy check looks at. */
export interface PurchaseCheck {
  readonly priceCents: number
  readonly category: string
  readonly sellerAgentId: string
}

/** The wallet an agent has before it sets a policy: made on first use. */
export const initialWallet = (agentId: string, now: number): WalletRecord => ({
  agentId,
  policy: DEFAULT_POLICY,
  createdAt: new Date(now).toISOString(),
  updatedAt: new Date(now).toISOString()
})

/** The policy `body` asks for: each field it names replaces the current one, the rest is kept. */
export const applyPolicyUpdate = (p: WalletPolicy, body: UpdateWalletBody): WalletPolicy => {
  const pick = <K extends keyof WalletPolicy>(k: K): WalletPolicy[K] =>
    body[k as keyof UpdateWalletBody] !== undefined ? (body[k as keyof UpdateWalletBody] as WalletPolicy[K]) : p[k]
  return {
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
    },
    frozen: pick("frozen")
  }
}

/** Why a purchase that passed the limits must wait for the owner, or null when it need not. */
export const approvalNeeded = (
  p: WalletPolicy,
  priceCents: number,
  approved: boolean
): "manual" | "approvalThreshold" | null =>
  approved
    ? null
    : p.autonomyLevel === "manual"
      ? "manual"
      : p.autonomyLevel === "semi_auto" && priceCents > p.approvalThresholdCents
        ? "approvalThreshold"
        : null
