// The reference model of the money path: a small pure model of wallets, policies, purchases,
// approvals, refunds and idempotent retries that says what every operation must answer and how
// every balance must move (docs/testing.md, "Reference model"). The harness (money.model.test.ts)
// runs the same operations against the real services and compares.

export const DAY_MS = 86_400_000
export const APPROVAL_TTL_MS = 7 * DAY_MS
export const FILING_WINDOW_MS = 14 * DAY_MS

export type Autonomy = "manual" | "semi_auto" | "full_auto"

export interface Policy {
  readonly perTransactionLimitCents: number | null
  readonly dailyLimitCents: number | null
  readonly monthlyLimitCents: number | null
  /** Indices of agents whose services may be bought (null: any). */
  readonly allowedSellers: ReadonlyArray<number> | null
  readonly allowedCategories: ReadonlyArray<string> | null
  readonly approvalThresholdCents: number
  readonly autonomyLevel: Autonomy
  readonly autoRecharge: { readonly enabled: boolean; readonly thresholdCents: number; readonly amountCents: number }
}

export const DEFAULT_POLICY: Policy = {
  perTransactionLimitCents: null,
  dailyLimitCents: null,
  monthlyLimitCents: null,
  allowedSellers: null,
  allowedCategories: null,
  approvalThresholdCents: 10_000,
  autonomyLevel: "full_auto",
  autoRecharge: { enabled: false, thresholdCents: 0, amountCents: 1_000 }
}

/** The world of one run: agent i sells one service in CATEGORIES[i % 2] with three tiers. */
export const CATEGORIES = ["model-a", "model-b"] as const
export const AGENTS = 3
export const TIERS = 3

export interface Tx {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly price: number
  readonly sellerCents: number
  readonly feeCents: number
  status: "completed" | "failed" | "refunded"
  readonly createdAt: number
  /** The dispute on it: none, open (its refund was blocked: the seller could not cover it), resolved. */
  dispute: "none" | "open" | "resolved"
}

export interface Approval {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly tier: number
  readonly price: number
  readonly key: string | null
  readonly fail: boolean
  status: "pending" | "approved" | "declined"
  readonly expiresAt: number
}

export interface State {
  now: number
  /** Tier prices: prices[seller][tier]. */
  readonly prices: ReadonlyArray<ReadonlyArray<number>>
  balances: Array<number>
  /** The platform's fee account, relative to where it stood when the run began. */
  fees: number
  policies: Array<Policy>
  /** Completed purchases per buyer and UTC day index. */
  spend: Map<string, number>
  txs: Map<string, Tx>
  txByKey: Map<string, string>
  approvals: Map<string, Approval>
  approvalByKey: Map<string, string>
}

export const initialState = (now: number, prices: ReadonlyArray<ReadonlyArray<number>>, funding: ReadonlyArray<number>): State => ({
  now,
  prices,
  balances: [...funding],
  fees: 0,
  policies: Array.from({ length: AGENTS }, () => DEFAULT_POLICY),
  spend: new Map(),
  txs: new Map(),
  txByKey: new Map(),
  approvals: new Map(),
  approvalByKey: new Map()
})

export const clone = (s: State): State => structuredClone(s)

/** The 85/15 split, restated independently: fee = 15 % rounded half up, in integers. */
export const split = (price: number) => {
  const fee = Math.floor((price * 15 + 50) / 100)
  return { sellerCents: price - fee, feeCents: fee }
}

const dayOf = (ms: number) => Math.floor(ms / DAY_MS)
const monthStartDay = (ms: number) => {
  const d = new Date(ms)
  return dayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))
}
export const spentToday = (s: State, agent: number) => s.spend.get(`${agent}|${dayOf(s.now)}`) ?? 0
export const spentThisMonth = (s: State, agent: number) => {
  let sum = 0
  for (let d = monthStartDay(s.now); d <= dayOf(s.now); d++) sum += s.spend.get(`${agent}|${d}`) ?? 0
  return sum
}
const addSpend = (s: State, agent: number, at: number, cents: number) => {
  const k = `${agent}|${dayOf(at)}`
  s.spend.set(k, (s.spend.get(k) ?? 0) + cents)
}

/** What an operation answers, reduced to what the model can know. */
export type Outcome =
  | { readonly _tag: "completed"; readonly price: number; readonly txId?: string }
  | { readonly _tag: "failed"; readonly txId?: string }
  | { readonly _tag: "pending"; readonly reason: "manual" | "approvalThreshold"; readonly approvalId?: string }
  | { readonly _tag: "replayTx"; readonly txId: string }
  | { readonly _tag: "replayApproval"; readonly approvalId: string }
  | { readonly _tag: "refused"; readonly error: string; readonly policy?: string; readonly state?: string }
  | { readonly _tag: "ok" }

export const refused = (error: string, extra: { policy?: string; state?: string } = {}): Outcome => ({ _tag: "refused", error, ...extra })

/** The policy check and autonomy decision (Wallet.authorize), restated. */
const authorize = (s: State, buyer: number, seller: number, price: number, approved: boolean): Outcome | "approved" | { readonly wait: "manual" | "approvalThreshold" } => {
  const p = s.policies[buyer]
  if (p.allowedSellers !== null && !p.allowedSellers.includes(seller)) return refused("PolicyViolation", { policy: "allowedSellers" })
  if (p.allowedCategories !== null && !p.allowedCategories.includes(CATEGORIES[seller % 2])) return refused("PolicyViolation", { policy: "allowedCategories" })
  if (p.perTransactionLimitCents !== null && price > p.perTransactionLimitCents) return refused("PolicyViolation", { policy: "perTransactionLimit" })
  if (p.dailyLimitCents !== null && spentToday(s, buyer) + price > p.dailyLimitCents) return refused("PolicyViolation", { policy: "dailyLimit" })
  if (p.monthlyLimitCents !== null && spentThisMonth(s, buyer) + price > p.monthlyLimitCents) return refused("PolicyViolation", { policy: "monthlyLimit" })
  if (approved) return "approved"
  if (p.autonomyLevel === "manual") return { wait: "manual" }
  if (p.autonomyLevel === "semi_auto" && price > p.approvalThresholdCents) return { wait: "approvalThreshold" }
  return "approved"
}

/** Delivery, settlement and the after-debit hooks of an authorised purchase; mutates `s`. */
const settle = (s: State, buyer: number, seller: number, price: number, fail: boolean, txId: string, key: string | null): Outcome => {
  if (fail) {
    s.txs.set(txId, { id: txId, buyer, seller, price, sellerCents: 0, feeCents: 0, status: "failed", createdAt: s.now, dispute: "none" })
    if (key !== null) s.txByKey.set(`${buyer}|${key}`, txId)
    return { _tag: "failed", txId }
  }
  if (s.balances[buyer] < price) return refused("InsufficientCredits")
  const { sellerCents, feeCents } = split(price)
  const before = s.balances[buyer]
  s.balances[buyer] -= price
  s.balances[seller] += sellerCents
  s.fees += feeCents
  addSpend(s, buyer, s.now, price)
  s.txs.set(txId, { id: txId, buyer, seller, price, sellerCents, feeCents, status: "completed", createdAt: s.now, dispute: "none" })
  if (key !== null) s.txByKey.set(`${buyer}|${key}`, txId)
  // Low balance: from ≥ threshold to < threshold; fake payments credit the recharge at once.
  const r = s.policies[buyer].autoRecharge
  if (r.thresholdCents > 0 && s.balances[buyer] < r.thresholdCents && before >= r.thresholdCents && r.enabled) s.balances[buyer] += r.amountCents
  return { _tag: "completed", price, txId }
}

export interface Buy {
  readonly buyer: number
  readonly seller: number
  readonly tier: number
  readonly key: string | null
  readonly fail: boolean
}

/**
 * A purchase. `ids` are the ids the real service gave (a transaction or approval), so the model
 * can follow them; undefined while predicting.
 */
export const buy = (s: State, b: Buy, ids: { readonly txId?: string; readonly approvalId?: string }): Outcome => {
  if (b.buyer === b.seller) return refused("InvalidInput")
  if (b.key !== null) {
    const tx = s.txByKey.get(`${b.buyer}|${b.key}`)
    if (tx !== undefined) return { _tag: "replayTx", txId: tx }
    const a = s.approvalByKey.get(`${b.buyer}|${b.key}`)
    if (a !== undefined) return { _tag: "replayApproval", approvalId: a }
  }
  const price = s.prices[b.seller][b.tier]
  const decision = authorize(s, b.buyer, b.seller, price, false)
  if (typeof decision === "object" && "wait" in decision) {
    const id = ids.approvalId ?? "?"
    s.approvals.set(id, { id, buyer: b.buyer, seller: b.seller, tier: b.tier, price, key: b.key, fail: b.fail, status: "pending", expiresAt: s.now + APPROVAL_TTL_MS })
    if (b.key !== null) s.approvalByKey.set(`${b.buyer}|${b.key}`, id)
    return { _tag: "pending", reason: decision.wait, approvalId: id }
  }
  if (decision !== "approved") return decision
  return settle(s, b.buyer, b.seller, price, b.fail, ids.txId ?? "?", b.key)
}

/** The owner approves: executes now at the current list price, limits re-checked, no second approval. */
export const approve = (s: State, approvalId: string, txId: string | undefined): Outcome => {
  const a = s.approvals.get(approvalId)!
  if (a.status !== "pending") return refused("Conflict", { state: a.status })
  if (a.expiresAt <= s.now) return refused("Conflict", { state: "expired" })
  const price = s.prices[a.seller][a.tier]
  const decision = authorize(s, a.buyer, a.seller, price, true)
  if (decision !== "approved") return decision as Outcome
  const out = settle(s, a.buyer, a.seller, price, a.fail, txId ?? "?", a.key)
  if (out._tag === "refused") return out
  a.status = "approved"
  return out
}

export const decline = (s: State, approvalId: string): Outcome => {
  const a = s.approvals.get(approvalId)!
  if (a.status !== "pending") return refused("Conflict", { state: a.status })
  if (a.expiresAt <= s.now) return refused("Conflict", { state: "expired" })
  a.status = "declined"
  return { _tag: "ok" }
}

/** The buyer disputes and the seller accepts: the exact reverse of the purchase. */
export const refund = (s: State, txId: string): Outcome => {
  const tx = s.txs.get(txId)!
  if (tx.dispute === "resolved") return refused("Conflict", { state: "resolved_refunded" })
  if (tx.dispute === "none") {
    if (tx.status !== "completed") return refused("Conflict", { state: tx.status })
    if (s.now - tx.createdAt > FILING_WINDOW_MS) return refused("Conflict", { state: "filing_window_closed" })
    // The dispute is opened (its own unit of work) before the seller accepts it.
    tx.dispute = "open"
  }
  if (s.balances[tx.seller] < tx.sellerCents) return refused("Conflict", { state: "refund_blocked" })
  tx.dispute = "resolved"
  s.balances[tx.buyer] += tx.price
  s.balances[tx.seller] -= tx.sellerCents
  s.fees -= tx.feeCents
  addSpend(s, tx.buyer, tx.createdAt, -tx.price)
  tx.status = "refunded"
  return { _tag: "ok" }
}

export const topup = (s: State, agent: number, amount: number): Outcome => {
  s.balances[agent] += amount
  return { _tag: "ok" }
}

export const setPolicy = (s: State, agent: number, p: Policy): Outcome => {
  if (p.dailyLimitCents !== null && p.monthlyLimitCents !== null && p.dailyLimitCents > p.monthlyLimitCents) return refused("InvalidInput")
  s.policies[agent] = p
  return { _tag: "ok" }
}
