// The reference model of the money path: a small pure model of wallets, policies, purchases,
// approvals, sagas, negotiated prices, refunds, idempotent retries and orders of agents' services
// (held in escrow until the seller delivers, fails or misses the deadline) that says what every
// operation must answer and how every balance must move (docs/testing.md, "Reference model"). It
// restates the owner's promises (docs/money.md), not the service's code: a purchase, an approval or
// a saga's escrow is allowed only while completed spend + escrow held by running sagas and pending
// orders + its price stays within every limit; an approval charges exactly what it quoted or nothing
// ("void"); terms give no discount; only the platform's seeded sellers simulate failures; an order
// is paid once, only when delivered before its deadline, and refunded in full otherwise
// (docs/fulfilment.md). The harness
// (money.model.test.ts) runs the same operations against the real services and compares.

export const DAY_MS = 86_400_000
export const APPROVAL_TTL_MS = 7 * DAY_MS
export const FILING_WINDOW_MS = 14 * DAY_MS
/** How long an accepted negotiated price stays redeemable. */
export const NEGOTIATION_VALIDITY_MS = DAY_MS

export type Autonomy = "manual" | "semi_auto" | "full_auto"

export interface Policy {
  readonly perTransactionLimitCents: number | null
  readonly dailyLimitCents: number | null
  readonly monthlyLimitCents: number | null
  /** Indices of parties whose services may be bought (null: any). */
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

/**
 * The world of one run: agents 0..AGENTS-1 buy, and each sells one service of TIERS tiers in
 * CATEGORIES[i % 2]; party PLATFORM is a seeded platform seller (only it simulates failed, slow and
 * timed-out deliveries), selling a seeded service of PLATFORM_TIERS tiers in PLATFORM_CATEGORY.
 */
export const CATEGORIES = ["model-a", "model-b"] as const
export const AGENTS = 3
export const TIERS = 3
export const PLATFORM = AGENTS
export const PARTIES = AGENTS + 1
export const PLATFORM_SELLER = "agt_seller_pixelmint"
export const PLATFORM_SERVICE = "svc_image_moderation"
export const PLATFORM_CATEGORY = "moderation"
export const PLATFORM_TIERS = 2
/** Simulated deliveries of the platform service: a slow one answers after SLOW_MS, below every tier's deliver timeout (≥ 1 s). */
export const SLOW_MS = 800

export const categoryOf = (seller: number) => (seller === PLATFORM ? PLATFORM_CATEGORY : CATEGORIES[seller % 2])

export interface Tx {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly price: number
  readonly sellerCents: number
  readonly feeCents: number
  /** pending: an order waiting for its seller (its price in escrow, no shares yet). */
  status: "pending" | "completed" | "failed" | "refunded"
  readonly createdAt: number
  /** The dispute on it: none, open (its refund was blocked: the seller could not cover it), resolved. */
  dispute: "none" | "open" | "resolved"
}

export interface Approval {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly tier: number
  /** The quoted price: what approving may charge, and nothing else. */
  readonly price: number
  readonly key: string | null
  readonly simulate: Delivery
  readonly negotiation: string | null
  status: "pending" | "approved" | "declined" | "void"
  readonly expiresAt: number
}

/** What the buyer asks the seller's delivery to simulate ("ok": nothing). */
export type Delivery = "ok" | "fail" | "slow" | "timeout"

export interface Saga {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly price: number
  /** running: escrow held until the delivery at dueAt (then it settles, or a timeout releases it). */
  status: "running" | "completed" | "compensated"
  readonly dueAt: number
  readonly outcome: "deliver" | "timeout"
}

/**
 * An order: a purchase of an agent's service (its seller fulfils it), its price in escrow while
 * pending. It ends once: delivered (85/15 from the escrow), failed or expired (the price back in
 * full, a redeemed negotiation usable again). Its id is its transaction's.
 */
export interface Order {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly price: number
  readonly createdAt: number
  /** An answer at or after it finds the order expired (docs/fulfilment.md, "Deadline"). */
  readonly deadlineAt: number
  /** The tier bought (its promise, AGENT_P95_MS[tier], is the one the purchase is judged by). */
  readonly tier: number
  readonly negotiation: string | null
  status: "pending" | "delivered" | "failed" | "expired"
  /** What the seller delivered (the first delivery's; a second one does not replace it). */
  output: unknown
}

/** The agents' tiers promise these p95 latencies (tier t of every agent's service). */
export const AGENT_P95_MS = [1_000, 8_000, 60_000] as const
/** How long a seller has to answer an order: twice the promised p95, at least 10 s, at most an hour. */
export const orderDeadlineMs = (p95Ms: number) => Math.min(3_600_000, Math.max(10_000, 2 * p95Ms))

export interface Negotiated {
  readonly id: string
  readonly buyer: number
  readonly seller: number
  readonly tier: number
  readonly price: number
  readonly expiresAt: number
  used: boolean
}

export interface State {
  now: number
  /** Tier prices: prices[seller][tier] (sellers may change them). */
  prices: Array<Array<number>>
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
  sagas: Map<string, Saga>
  negotiations: Map<string, Negotiated>
  orders: Map<string, Order>
}

export const initialState = (
  now: number,
  prices: ReadonlyArray<ReadonlyArray<number>>,
  balances: ReadonlyArray<number>
): State => ({
  now,
  prices: prices.map((p) => [...p]),
  balances: [...balances],
  fees: 0,
  policies: Array.from({ length: PARTIES }, () => DEFAULT_POLICY),
  spend: new Map(),
  txs: new Map(),
  txByKey: new Map(),
  approvals: new Map(),
  approvalByKey: new Map(),
  sagas: new Map(),
  negotiations: new Map(),
  orders: new Map()
})

export const clone = (s: State): State => structuredClone(s)

/** The 85/15 split, restated independently: fee = 15 % rounded half up, in integers. */
export const split = (price: number) => {
  const fee = Math.floor((price * 15 + 50) / 100)
  return { sellerCents: price - fee, feeCents: fee }
}

export const dayOf = (ms: number) => Math.floor(ms / DAY_MS)
export const monthStartDay = (ms: number) => {
  const d = new Date(ms)
  return dayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))
}
export const spentToday = (s: State, agent: number) => s.spend.get(`${agent}|${dayOf(s.now)}`) ?? 0
export const spentThisMonth = (s: State, agent: number) => {
  let sum = 0
  for (let d = monthStartDay(s.now); d <= dayOf(s.now); d++) sum += s.spend.get(`${agent}|${d}`) ?? 0
  return sum
}
/**
 * Money held for the agent by its running sagas and pending orders (escrow taken, not yet settled
 * or released; an order past its deadline still holds until it is expired): it counts in every window.
 */
export const held = (s: State, agent: number) => {
  let sum = 0
  for (const g of s.sagas.values()) if (g.buyer === agent && g.status === "running") sum += g.price
  for (const o of s.orders.values()) if (o.buyer === agent && o.status === "pending") sum += o.price
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
  | { readonly _tag: "saga"; readonly status: Saga["status"]; readonly price?: number; readonly why?: string }
  | { readonly _tag: "ok" }
  /** A purchase of an agent's service placed as an order: pending, its price held. */
  | { readonly _tag: "ordered"; readonly price: number; readonly txId: string }
  /** The seller's answer to an order: the order as it stands after it. */
  | { readonly _tag: "answered"; readonly status: "delivered" | "failed"; readonly output: unknown }
  /** A sweep of orders past their deadline: how many it expired. */
  | { readonly _tag: "expired"; readonly count: number }

export const refused = (error: string, extra: { policy?: string; state?: string } = {}): Outcome => ({
  _tag: "refused",
  error,
  ...extra
})

/** The owner's rules for one more purchase of `price` now: allowed sellers and categories, the limits counting money held, autonomy. */
const authorize = (
  s: State,
  buyer: number,
  seller: number,
  price: number,
  approved: boolean
): Outcome | "approved" | { readonly wait: "manual" | "approvalThreshold" } => {
  const p = s.policies[buyer]
  const h = held(s, buyer)
  if (p.allowedSellers !== null && !p.allowedSellers.includes(seller))
    return refused("PolicyViolation", { policy: "allowedSellers" })
  if (p.allowedCategories !== null && !p.allowedCategories.includes(categoryOf(seller)))
    return refused("PolicyViolation", { policy: "allowedCategories" })
  if (p.perTransactionLimitCents !== null && price > p.perTransactionLimitCents)
    return refused("PolicyViolation", { policy: "perTransactionLimit" })
  if (p.dailyLimitCents !== null && spentToday(s, buyer) + h + price > p.dailyLimitCents)
    return refused("PolicyViolation", { policy: "dailyLimit" })
  if (p.monthlyLimitCents !== null && spentThisMonth(s, buyer) + h + price > p.monthlyLimitCents)
    return refused("PolicyViolation", { policy: "monthlyLimit" })
  if (approved) return "approved"
  if (p.autonomyLevel === "manual") return { wait: "manual" }
  if (p.autonomyLevel === "semi_auto" && price > p.approvalThresholdCents) return { wait: "approvalThreshold" }
  return "approved"
}

/** The buyer's wallet after a debit: the low-balance crossing (≥ threshold to < threshold) recharges at once with fake payments. */
const afterDebit = (s: State, buyer: number, before: number) => {
  const r = s.policies[buyer].autoRecharge
  if (r.thresholdCents > 0 && s.balances[buyer] < r.thresholdCents && before >= r.thresholdCents && r.enabled)
    s.balances[buyer] += r.amountCents
}

/** Pays the seller 85/15 and records a completed purchase of `price` now. */
const pay = (s: State, buyer: number, seller: number, price: number, txId: string) => {
  const { sellerCents, feeCents } = split(price)
  s.balances[seller] += sellerCents
  s.fees += feeCents
  addSpend(s, buyer, s.now, price)
  s.txs.set(txId, {
    id: txId,
    buyer,
    seller,
    price,
    sellerCents,
    feeCents,
    status: "completed",
    createdAt: s.now,
    dispute: "none"
  })
}

const recordFailed = (s: State, buyer: number, seller: number, price: number, txId: string) =>
  s.txs.set(txId, {
    id: txId,
    buyer,
    seller,
    price,
    sellerCents: 0,
    feeCents: 0,
    status: "failed",
    createdAt: s.now,
    dispute: "none"
  })

/** Only the platform's seeded sellers simulate; any other seller delivers whatever the input says. */
export const effectiveDelivery = (seller: number, asked: Delivery): Delivery => (seller === PLATFORM ? asked : "ok")

/** When the seller answers an order: at once (the buy answers the delivered purchase), or later (the buy answers pending). */
export type Answering = "now" | "later"

/** What the harness's seller delivers when it answers an order at once. */
export const deliveredAtOnce = (txId: string) => ({ delivered: txId })

/** An order ends: delivered (85/15 from the escrow, spend dated when it was placed), or failed or expired (refunded in full). */
const endOrder = (s: State, o: Order, status: "delivered" | "failed" | "expired", output: unknown) => {
  const tx = s.txs.get(o.id)!
  o.status = status
  if (status === "delivered") {
    const { sellerCents, feeCents } = split(o.price)
    s.balances[o.seller] += sellerCents
    s.fees += feeCents
    addSpend(s, o.buyer, o.createdAt, o.price)
    s.txs.set(o.id, { ...tx, status: "completed", sellerCents, feeCents })
    o.output = output
    return
  }
  s.balances[o.buyer] += o.price
  tx.status = "failed"
  if (o.negotiation !== null) s.negotiations.get(o.negotiation)!.used = false
}

/** An authorised purchase of an agent's service: its price to escrow, a pending transaction, the order; the seller may deliver at once. */
const placeOrder = (
  s: State,
  x: {
    readonly buyer: number
    readonly seller: number
    readonly tier: number
    readonly price: number
    readonly txId: string
    readonly key: string | null
    readonly negotiation: string | null
  },
  answering: Answering
): Outcome => {
  if (s.balances[x.buyer] < x.price) return refused("InsufficientCredits")
  const before = s.balances[x.buyer]
  s.balances[x.buyer] -= x.price
  s.txs.set(x.txId, {
    id: x.txId,
    buyer: x.buyer,
    seller: x.seller,
    price: x.price,
    sellerCents: 0,
    feeCents: 0,
    status: "pending",
    createdAt: s.now,
    dispute: "none"
  })
  const order: Order = {
    id: x.txId,
    buyer: x.buyer,
    seller: x.seller,
    price: x.price,
    createdAt: s.now,
    deadlineAt: s.now + orderDeadlineMs(AGENT_P95_MS[x.tier]),
    tier: x.tier,
    negotiation: x.negotiation,
    status: "pending",
    output: null
  }
  s.orders.set(x.txId, order)
  if (x.key !== null) s.txByKey.set(`${x.buyer}|${x.key}`, x.txId)
  afterDebit(s, x.buyer, before)
  if (answering === "later") return { _tag: "ordered", price: x.price, txId: x.txId }
  endOrder(s, order, "delivered", deliveredAtOnce(x.txId))
  return { _tag: "completed", price: x.price, txId: x.txId }
}

/**
 * The seller answers order `id` (deliver with `output`, or fail): a pending order before its
 * deadline ends so; at or past the deadline it expires now (refunded) and the answer is refused; the
 * same answer again is the order as it is (the first output stands, nothing moves); the other
 * answer to an ended order is refused.
 */
export const answerOrder = (s: State, id: string, what: "deliver" | "fail", output: unknown): Outcome => {
  const o = s.orders.get(id)!
  const same = what === "deliver" ? "delivered" : "failed"
  if (o.status === same) return { _tag: "answered", status: same, output: o.output }
  if (o.status !== "pending") return refused("OrderClosed", { state: o.status })
  if (o.deadlineAt <= s.now) {
    endOrder(s, o, "expired", null)
    return refused("OrderClosed", { state: "expired" })
  }
  endOrder(s, o, same, what === "deliver" ? output : null)
  return { _tag: "answered", status: same, output: o.output }
}

/** The sweep: every pending order whose deadline has passed expires, refunded in full. */
export const expireDue = (s: State): Outcome => {
  let count = 0
  for (const o of s.orders.values()) {
    if (o.status !== "pending" || o.deadlineAt > s.now) continue
    endOrder(s, o, "expired", null)
    count++
  }
  return { _tag: "expired", count }
}

/** Delivery, settlement and the after-debit hooks of an authorised purchase; mutates `s`. */
const settle = (
  s: State,
  x: {
    readonly buyer: number
    readonly seller: number
    readonly tier: number
    readonly price: number
    readonly txId: string
    readonly key: string | null
    readonly negotiation: string | null
  },
  asked: Delivery,
  answering: Answering
): Outcome => {
  const { buyer, seller, price, txId, key, negotiation } = x
  // An agent's service is an order its seller answers (simulate is plain input to it).
  if (seller !== PLATFORM) return placeOrder(s, x, answering)
  // An instant purchase does not wait: a slow seller's answer is in hand when it answers, a timeout is a failure.
  const delivery = effectiveDelivery(seller, asked)
  if (delivery === "fail" || delivery === "timeout") {
    recordFailed(s, buyer, seller, price, txId)
    if (key !== null) s.txByKey.set(`${buyer}|${key}`, txId)
    if (negotiation !== null) s.negotiations.get(negotiation)!.used = false
    return { _tag: "failed", txId }
  }
  if (s.balances[buyer] < price) return refused("InsufficientCredits")
  const before = s.balances[buyer]
  s.balances[buyer] -= price
  pay(s, buyer, seller, price, txId)
  if (key !== null) s.txByKey.set(`${buyer}|${key}`, txId)
  afterDebit(s, buyer, before)
  return { _tag: "completed", price, txId }
}

export interface Buy {
  readonly buyer: number
  readonly seller: number
  readonly tier: number
  readonly key: string | null
  readonly simulate: Delivery
  /** When an agent seller answers the order (now when absent). */
  readonly answer?: Answering
}

/**
 * A purchase (at the list price, or at a negotiated one: `negotiation`). `ids` are the ids the real
 * service gave (a transaction or approval), so the model can follow them; undefined while predicting.
 */
export const buy = (
  s: State,
  b: Buy,
  ids: { readonly txId?: string; readonly approvalId?: string },
  negotiation: string | null = null
): Outcome => {
  if (b.buyer === b.seller) return refused("InvalidInput")
  if (b.key !== null) {
    const tx = s.txByKey.get(`${b.buyer}|${b.key}`)
    if (tx !== undefined) return { _tag: "replayTx", txId: tx }
    const a = s.approvalByKey.get(`${b.buyer}|${b.key}`)
    if (a !== undefined) return { _tag: "replayApproval", approvalId: a }
  }
  // A new purchase gets a new transaction: an id the model already holds would be a replay (or two purchases under one id).
  if (ids.txId !== undefined && s.txs.has(ids.txId)) return refused("TransactionIdReused")
  let price = s.prices[b.seller][b.tier]
  if (negotiation !== null) {
    const n = s.negotiations.get(negotiation)!
    if (n.used || n.expiresAt <= s.now) return refused("NegotiationUnusable")
    price = n.price
  }
  const decision = authorize(s, b.buyer, b.seller, price, false)
  if (typeof decision === "object" && "wait" in decision) {
    const id = ids.approvalId ?? "?"
    // The negotiated price is used by the request (given back if the owner declines).
    if (negotiation !== null) s.negotiations.get(negotiation)!.used = true
    s.approvals.set(id, {
      id,
      buyer: b.buyer,
      seller: b.seller,
      tier: b.tier,
      price,
      key: b.key,
      simulate: b.simulate,
      negotiation,
      status: "pending",
      expiresAt: s.now + APPROVAL_TTL_MS
    })
    if (b.key !== null) s.approvalByKey.set(`${b.buyer}|${b.key}`, id)
    return { _tag: "pending", reason: decision.wait, approvalId: id }
  }
  if (decision !== "approved") return decision
  if (negotiation !== null) s.negotiations.get(negotiation)!.used = true
  const out = settle(
    s,
    { buyer: b.buyer, seller: b.seller, tier: b.tier, price, txId: ids.txId ?? "?", key: b.key, negotiation },
    b.simulate,
    b.answer ?? "now"
  )
  // A refused purchase leaves no trace: the negotiated price stays unused.
  if (out._tag === "refused" && negotiation !== null) s.negotiations.get(negotiation)!.used = false
  return out
}

/**
 * The owner approves: it executes only if what would be charged now is what the approval quoted
 * (else it is void and charges nothing), with the limits checked again now; no second approval.
 */
export const approve = (s: State, approvalId: string, txId: string | undefined): Outcome => {
  const a = s.approvals.get(approvalId)!
  if (a.status !== "pending") return refused("Conflict", { state: a.status })
  if (a.expiresAt <= s.now) return refused("Conflict", { state: "expired" })
  const now = a.negotiation !== null ? a.price : s.prices[a.seller][a.tier]
  if (now !== a.price) {
    a.status = "void"
    return refused("Conflict", { state: "void" })
  }
  const decision = authorize(s, a.buyer, a.seller, a.price, true)
  if (decision !== "approved") return decision as Outcome
  const out = settle(
    s,
    {
      buyer: a.buyer,
      seller: a.seller,
      tier: a.tier,
      price: a.price,
      txId: txId ?? "?",
      key: a.key,
      negotiation: a.negotiation
    },
    a.simulate,
    "now"
  )
  if (out._tag === "refused") return out
  a.status = "approved"
  return out
}

export const decline = (s: State, approvalId: string): Outcome => {
  const a = s.approvals.get(approvalId)!
  if (a.status !== "pending") return refused("Conflict", { state: a.status })
  if (a.expiresAt <= s.now) return refused("Conflict", { state: "expired" })
  a.status = "declined"
  if (a.negotiation !== null) s.negotiations.get(a.negotiation)!.used = false
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
  if (p.dailyLimitCents !== null && p.monthlyLimitCents !== null && p.dailyLimitCents > p.monthlyLimitCents)
    return refused("InvalidInput")
  s.policies[agent] = p
  return { _tag: "ok" }
}

/** The seller changes a tier's list price (pending approvals quoted at the old price no longer execute). */
export const reprice = (s: State, seller: number, tier: number, price: number): Outcome => {
  s.prices[seller][tier] = price
  return { _tag: "ok" }
}

/** A price the seller accepted for the buyer (one purchase at it, within NEGOTIATION_VALIDITY_MS). */
export const negotiated = (s: State, n: Omit<Negotiated, "used" | "expiresAt">): Outcome => {
  s.negotiations.set(n.id, { ...n, expiresAt: s.now + NEGOTIATION_VALIDITY_MS, used: false })
  return { _tag: "ok" }
}

export interface SagaStart {
  readonly buyer: number
  readonly seller: number
  readonly tier: number
  readonly simulate: Delivery
}

/** The deliver timeout of the platform tiers (twice the p95 latency, at least 1 s): what a "timeout" waits. */
export const PLATFORM_TIMEOUT_MS = [1_200, 1_000] as const

/**
 * A saga started and driven as far as it goes now: the quote and the escrow step check the owner's
 * rules (counting the money the buyer's other running sagas hold) and the balance; an instant
 * delivery settles at once, a slow or timed-out one holds the escrow until its time; a failed one
 * releases it (a failed purchase is recorded). Nothing is charged by a compensated saga.
 */
export const startSaga = (
  s: State,
  g: SagaStart,
  ids: { readonly sagaId?: string; readonly txId?: string }
): Outcome => {
  const id = ids.sagaId ?? "?"
  const price = s.prices[g.seller][g.tier]
  const compensated = (why: string): Outcome => {
    s.sagas.set(id, {
      id,
      buyer: g.buyer,
      seller: g.seller,
      price,
      status: "compensated",
      dueAt: s.now,
      outcome: "deliver"
    })
    return { _tag: "saga", status: "compensated", why }
  }
  const decision = authorize(s, g.buyer, g.seller, price, false)
  if (typeof decision === "object" && "wait" in decision) return compensated("approval")
  if (decision !== "approved")
    return compensated(decision._tag === "refused" && decision.policy !== undefined ? decision.policy : "policy")
  if (s.balances[g.buyer] < price) return compensated("funds")
  const before = s.balances[g.buyer]
  s.balances[g.buyer] -= price
  afterDebit(s, g.buyer, before)
  const delivery = effectiveDelivery(g.seller, g.simulate)
  if (delivery === "fail") {
    s.balances[g.buyer] += price
    recordFailed(s, g.buyer, g.seller, price, ids.txId ?? "?")
    return compensated("delivery")
  }
  if (delivery === "ok") {
    pay(s, g.buyer, g.seller, price, ids.txId ?? "?")
    s.sagas.set(id, {
      id,
      buyer: g.buyer,
      seller: g.seller,
      price,
      status: "completed",
      dueAt: s.now,
      outcome: "deliver"
    })
    return { _tag: "saga", status: "completed", price }
  }
  const dueAt = s.now + (delivery === "slow" ? SLOW_MS : PLATFORM_TIMEOUT_MS[g.tier])
  s.sagas.set(id, {
    id,
    buyer: g.buyer,
    seller: g.seller,
    price,
    status: "running",
    dueAt,
    outcome: delivery === "slow" ? "deliver" : "timeout"
  })
  return { _tag: "saga", status: "running", price }
}

/** Running sagas whose delivery is due by now: settled (a slow answer) or released (a timeout). `txIds` are the real transactions. */
export const runDueSagas = (s: State, txIds: ReadonlyMap<string, string | null>) => {
  for (const g of s.sagas.values()) {
    if (g.status !== "running" || g.dueAt > s.now) continue
    const txId = txIds.get(g.id) ?? "?"
    if (g.outcome === "deliver") {
      pay(s, g.buyer, g.seller, g.price, txId)
      g.status = "completed"
    } else {
      s.balances[g.buyer] += g.price
      recordFailed(s, g.buyer, g.seller, g.price, txId)
      g.status = "compensated"
    }
  }
}

/**
 * A pay-per-request call (MPP) of an agent's per_call service, paid with the challenge it was
 * given: the owner's rules as for any purchase, except that a purchase needing approval is refused
 * (a paid call cannot wait); a short wallet answers a fresh challenge (402); nothing is charged
 * unless the call is served.
 */
export const paidCall = (
  s: State,
  c: { readonly buyer: number; readonly seller: number; readonly tier: number },
  txId: string | undefined
): Outcome => {
  const price = s.prices[c.seller][c.tier]
  const decision = authorize(s, c.buyer, c.seller, price, false)
  if (typeof decision === "object" && "wait" in decision) return refused("ApprovalRequired")
  if (decision !== "approved") return decision
  if (s.balances[c.buyer] < price) return refused("PaymentRequired")
  const before = s.balances[c.buyer]
  s.balances[c.buyer] -= price
  pay(s, c.buyer, c.seller, price, txId ?? "?")
  afterDebit(s, c.buyer, before)
  return { _tag: "completed", price, txId: txId ?? "?" }
}
