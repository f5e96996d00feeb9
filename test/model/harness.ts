// The harness of the money model (money.model.test.ts): one run of a generated (or written-out)
// scenario against the real services over one storage and the pure model (model.ts) side by side —
// each operation's answer compared with the model's, and after every step the balances, fees,
// spend, purchases and sagas compared, the owner's promises checked on the raw data and, on SQL
// storages, the ledger checked by plain SQL (invariants.ts).
import { Clock, Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { escrowAccount, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Disputes } from "../../src/services/commerce/Disputes.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { makeCredential } from "../../src/services/mpp/encoding.js"
import { Mpp } from "../../src/services/mpp/Mpp.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { OrderStore } from "../../src/services/purchases/OrderStore.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import type { StorageCase } from "../fixtures/db.js"
import { ownerCaller, tier } from "../fixtures/money.js"
import { checkLedgerSql, checkOwnersPromises, newSeen, sqlBalance, type Hold } from "./invariants.js"
import * as M from "./model.js"
import {
  type Actual,
  agentSeller,
  diverge,
  type Faults,
  fromError,
  fromPurchase,
  fromSaga,
  idsOf,
  label,
  matches,
  type Services,
  type Storage,
  servicesLayer,
  type Stores,
  storageFor,
  withFaults
} from "./system.js"
import type { Answer, Op, Scenario } from "./world.js"

const permutations = (xs: ReadonlyArray<number>): Array<Array<number>> =>
  xs.length <= 1
    ? [[...xs]]
    : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]))

/** What the runs exercised (printed at the end): answers by kind, and the operations by kind. */
export type Stats = Map<string, number>
const count = (stats: Stats, k: string) => stats.set(k, (stats.get(k) ?? 0) + 1)

/** Tier t of an agent's service at `price`, promising the model's p95 latency (its orders' deadline follows). */
const agentTier = (t: number, price: number) => {
  const x = tier(`t${t}`, price)
  return { ...x, sla: { ...x.sla, p95LatencyMs: M.AGENT_P95_MS[t] } }
}

const inputOf = (d: M.Delivery) =>
  d === "ok" ? { n: 1 } : d === "slow" ? { simulate: "slow", delayMs: M.SLOW_MS } : { simulate: d }

export const run = (stats: Stats, storage: Storage, sc: Scenario) =>
  Effect.gen(function* () {
    const faults: Faults = { armed: undefined, tripped: false }
    const world = { now: sc.start }
    const real = yield* Clock.Clock
    // The model's clock for every operation (layers are built on the real one: pools time out on it).
    const clock: Clock.Clock = {
      // Methods, not fields: a spread of the live clock would drop them (sleep included).
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: real.monotonicTimeNanos,
      sleep: (d) => real.sleep(d),
      currentTimeMillisUnsafe: () => world.now,
      currentTimeMillis: Effect.sync(() => world.now),
      currentTimeNanosUnsafe: () => BigInt(world.now) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(world.now) * 1_000_000n)
    }
    let scope = yield* Scope.make()
    const open = Effect.gen(function* () {
      const stores = withFaults(yield* storage.open(scope), faults)
      const services = yield* Layer.buildWithScope(servicesLayer, scope).pipe(Effect.provideContext(stores))
      return Context.merge(stores, services)
    })
    let ctx = yield* open
    const within = <A, E>(effect: Effect.Effect<A, E, Stores | Services>) =>
      effect.pipe(Effect.provideService(Clock.Clock, clock), Effect.provideContext(ctx))
    const restart = Effect.gen(function* () {
      yield* Scope.close(scope, Exit.void)
      scope = yield* Scope.make()
      ctx = yield* open
    })
    const sagaIds: Array<Array<string>> = Array.from({ length: M.AGENTS }, () => [])
    /** Drives every saga whose delivery is due (as the worker would); returns what each recorded. */
    const runDue = Effect.suspend(() =>
      within(
        Effect.gen(function* () {
          const sagas = yield* Sagas
          while ((yield* sagas.runDue()) > 0) {}
        })
      )
    )

    try {
      // The world: three agents, each selling one service of three tiers, funded as generated; and the platform's seeded seller.
      const agents = yield* within(
        Effect.forEach(sc.prices, (prices, i) =>
          Effect.gen(function* () {
            const seller = yield* agentSeller(
              `Model ${i}`,
              prices.map((p, t) => agentTier(t, p)),
              M.CATEGORIES[i % 2]
            )
            if (sc.funding[i] > 0) yield* Effect.flatMap(Wallet, (w) => w.topup(seller.agentId, sc.funding[i]))
            return seller
          })
        )
      )
      const platform = yield* within(Effect.flatMap(Catalog, (c) => c.getService(M.PLATFORM_SERVICE)))
      if (
        platform.sellerAgentId !== M.PLATFORM_SELLER ||
        platform.category !== M.PLATFORM_CATEGORY ||
        platform.tiers.length !== M.PLATFORM_TIERS
      )
        throw new Error(`the seeded ${M.PLATFORM_SERVICE} is not what model.ts assumes`)
      platform.tiers.forEach((t, i) => {
        if (
          Math.min(30_000, Math.max(1_000, 2 * t.sla.p95LatencyMs)) !== M.PLATFORM_TIMEOUT_MS[i] ||
          M.SLOW_MS >= M.PLATFORM_TIMEOUT_MS[i]
        )
          throw new Error(`the seeded tier ${t.id}'s deliver timeout is not what model.ts assumes`)
      })
      const ids = [...agents.map((a) => a.agentId), M.PLATFORM_SELLER]
      const serviceOf = (seller: number) => (seller === M.PLATFORM ? M.PLATFORM_SERVICE : agents[seller].service.id)
      const tierIdOf = (seller: number, t: number) => (seller === M.PLATFORM ? platform.tiers[t].id : `t${t}`)
      const platformBalance = yield* within(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(M.PLATFORM_SELLER))))
      const fees0 = yield* within(Effect.flatMap(Ledger, (l) => l.balance(PLATFORM_FEES)))
      const sqlOf = () => Context.getOption(ctx, SqlClient.SqlClient)
      const sql0 = sqlOf()
      const sqlFees0 = Option.isSome(sql0) ? yield* sqlBalance(sql0.value, PLATFORM_FEES) : 0
      const model = {
        s: M.initialState(
          sc.start,
          [...sc.prices, platform.tiers.map((t) => t.priceCents)],
          [...sc.funding, platformBalance]
        )
      }
      const disputeOf = new Map<string, string>()
      const seen = newSeen()

      /**
       * The agent seller answers a pending order of its service at once (unless it answers `later`,
       * in an answer op), through the orders API as a pull seller does: the answer the model compares
       * is the delivered purchase. A fault tripped by the delivery's own unit of work must leave the
       * order pending with its price in escrow; the seller then delivers again.
       */
      const fulfil = (answering: M.Answering, actual: Actual) =>
        actual._tag !== "ordered" || answering === "later"
          ? Effect.succeed(actual)
          : Effect.gen(function* () {
              const orders = yield* Orders
              // The order's own seller answers it: a keyed replay may name another service and still
              // answer the first purchase's order (the same key, the first outcome).
              const placed = yield* Effect.flatMap(OrderStore, (o) => o.get(actual.txId))
              if (placed === undefined) throw diverge(`order ${actual.txId} is not in the store`, actual)
              const sellerId = placed.sellerAgentId
              const deliver = orders.deliver(sellerId, actual.txId, { output: M.deliveredAtOnce(actual.txId) })
              const first = yield* Effect.exit(deliver)
              let order
              if (Exit.isSuccess(first)) order = first.value
              else {
                if (!faults.tripped) return yield* Effect.failCause(first.cause)
                faults.tripped = false
                count(stats, "fault tripped in the seller's delivery")
                const still = yield* orders.get(sellerId, actual.txId)
                const held = yield* Effect.flatMap(Ledger, (l) => l.balance(escrowAccount(actual.txId)))
                if (still.status !== "pending" || held !== still.priceCents)
                  throw diverge(`order ${actual.txId}: a failed delivery left a trace`, {
                    status: still.status,
                    held,
                    price: still.priceCents
                  })
                order = yield* deliver
              }
              return (
                order.status === "delivered"
                  ? { _tag: "completed", price: order.priceCents, txId: order.transactionId }
                  : { _tag: "failed", txId: order.transactionId }
              ) as Actual
            })

      const buyEffect = (b: M.Buy, negotiationId?: string) =>
        Effect.flatMap(Commerce, (c) =>
          c.buy({
            caller: agents[b.buyer].caller,
            serviceId: serviceOf(b.seller),
            tierId: tierIdOf(b.seller, b.tier),
            input: inputOf(b.simulate),
            ...(b.key !== null ? { idempotencyReference: b.key } : {}),
            ...(negotiationId !== undefined ? { negotiationId } : {})
          })
        ).pipe(Effect.flatMap((p) => fulfil(b.answer ?? "now", fromPurchase(p))))
      const sagaEffect = (g: M.SagaStart) =>
        Effect.flatMap(Sagas, (s) =>
          s.start(agents[g.buyer].caller, {
            serviceId: serviceOf(g.seller),
            tierId: tierIdOf(g.seller, g.tier),
            input: inputOf(g.simulate)
          } as never)
        ).pipe(
          Effect.flatMap((saga) =>
            g.seller === M.PLATFORM || saga.status !== "running" || saga.transactionId === null
              ? Effect.succeed(saga)
              : // The deliver step on an agent's service may be an order its seller answers: at once here, as a buy's.
                Effect.gen(function* () {
                  const txId = saga.transactionId!
                  yield* Effect.flatMap(Orders, (o) =>
                    o.deliver(ids[g.seller], txId, { output: M.deliveredAtOnce(txId) })
                  )
                  const sagas = yield* Sagas
                  // Woken by the answer: driven here, or by a saga started beside it (its run holds this one meanwhile).
                  for (let tries = 0; ; tries++) {
                    while ((yield* sagas.runDue()) > 0) {}
                    const now = yield* sagas.get(ids[g.buyer], saga.id)
                    if (now.status !== "running" || tries === 100) return now
                    yield* Effect.sleep(10)
                  }
                })
          ),
          Effect.map(fromSaga)
        )
      const attempt = (effect: Effect.Effect<Actual, unknown, Stores | Services>) =>
        within(Effect.catch(effect, (e) => Effect.succeed(fromError(e))))

      /** An order of the run: a pending one when asked and there is one, else any. */
      const pickOrder = (pick: number, pending: boolean) => {
        const all = [...model.s.orders.values()]
        const waiting = all.filter((o) => o.status === "pending")
        const list = pending && waiting.length > 0 ? waiting : all
        return list.length === 0 ? undefined : list[pick % list.length]
      }
      const outputOf = (a: Answer) => (a.what === "deliver" ? { n: a.output } : null)
      /** The order's own seller answers it through the orders API: the answer is the order as it then stands. */
      const answerEffect = (o: M.Order, a: Answer) =>
        Effect.flatMap(Orders, (orders) =>
          a.what === "deliver"
            ? orders.deliver(ids[o.seller], o.id, { output: outputOf(a) })
            : orders.fail(ids[o.seller], o.id, { error: `the model's seller failed (${a.output})` })
        ).pipe(
          Effect.map((order): Actual =>
            order.status === "delivered" || order.status === "failed"
              ? { _tag: "answered", status: order.status, output: order.output }
              : { _tag: "refused", error: `an answer left the order ${order.status}` }
          )
        )
      const answerOne = (o: M.Order, a: Answer) =>
        Effect.map(attempt(answerEffect(o, a)), (actual) => ({
          actual,
          apply: (st: M.State) => M.answerOrder(st, o.id, a.what, outputOf(a))
        }))

      /** Runs a simple op against the system; returns its answer and how to apply it to a model state. */
      const perform = (op: Op) =>
        Effect.gen(function* () {
          const s = model.s
          switch (op._tag) {
            case "buy": {
              const actual = yield* attempt(buyEffect(op.b))
              return { actual, apply: (st: M.State) => M.buy(st, op.b, idsOf(actual)) }
            }
            case "topup": {
              const actual = yield* attempt(
                Effect.flatMap(Wallet, (w) => w.topup(ids[op.agent], op.amount)).pipe(
                  Effect.as({ _tag: "ok" } as Actual)
                )
              )
              return { actual, apply: (st: M.State) => M.topup(st, op.agent, op.amount) }
            }
            case "policy":
            case "limit":
            case "autonomy": {
              const p =
                op._tag === "policy"
                  ? op.policy
                  : op._tag === "limit"
                    ? { ...s.policies[op.agent], [op.field]: op.cents }
                    : { ...s.policies[op.agent], autonomyLevel: op.level, approvalThresholdCents: op.threshold }
              const body = {
                ...p,
                allowedSellers: p.allowedSellers === null ? null : p.allowedSellers.map((i) => ids[i])
              }
              const actual = yield* attempt(
                Effect.flatMap(Wallet, (w) => w.updatePolicy(ids[op.agent], body as never, { byOwner: true })).pipe(
                  Effect.as({ _tag: "ok" } as Actual)
                )
              )
              return { actual, apply: (st: M.State) => M.setPolicy(st, op.agent, p) }
            }
            case "approve":
            case "decline": {
              const list = [...s.approvals.values()]
              if (list.length === 0) return undefined
              const a = list[op.pick % list.length]
              const owner = ownerCaller(agents[a.buyer].caller.accountId)
              const actual = yield* attempt(
                Effect.flatMap(Commerce, (c) =>
                  op._tag === "approve" ? c.approve(owner, a.id) : c.decline(owner, a.id)
                ).pipe(
                  Effect.map((r): Actual => {
                    // The owner's word: an executed approval charges exactly the price it showed.
                    if (
                      r.transaction !== null &&
                      r.transaction.status !== "failed" &&
                      r.transaction.priceCents !== r.approval.quotedPriceCents
                    ) {
                      throw diverge(`approval ${a.id} charged other than it quoted`, {
                        quoted: r.approval.quotedPriceCents,
                        charged: r.transaction.priceCents
                      })
                    }
                    return r.transaction === null
                      ? { _tag: "ok" }
                      : r.transaction.status === "pending"
                        ? { _tag: "ordered", price: r.transaction.priceCents, txId: r.transaction.id }
                        : r.transaction.status === "failed"
                          ? { _tag: "failed", txId: r.transaction.id }
                          : { _tag: "completed", price: r.transaction.priceCents, txId: r.transaction.id }
                  }),
                  Effect.flatMap((actual) => fulfil("now", actual))
                )
              )
              return {
                actual,
                apply: (st: M.State) =>
                  op._tag === "approve" ? M.approve(st, a.id, idsOf(actual).txId) : M.decline(st, a.id)
              }
            }
            case "refund": {
              const list = [...s.txs.values()]
              if (list.length === 0) return undefined
              const tx = list[op.pick % list.length]
              const actual = yield* attempt(
                Effect.gen(function* () {
                  const disputes = yield* Disputes
                  let id = disputeOf.get(tx.id)
                  if (id === undefined) {
                    id = (yield* disputes.open(ids[tx.buyer], { transactionId: tx.id, reason: "model" })).id
                    disputeOf.set(tx.id, id)
                  }
                  yield* disputes.respond(ids[tx.seller], id, { action: "accept" })
                  return { _tag: "ok" } as Actual
                })
              )
              return { actual, apply: (st: M.State) => M.refund(st, tx.id) }
            }
            case "reprice": {
              const quoted = [...s.approvals.values()].filter((a) => a.status === "pending" && a.seller !== M.PLATFORM)
              const target =
                op.approval !== null && quoted.length > 0
                  ? quoted[op.approval % quoted.length]
                  : { seller: op.seller, tier: op.tier }
              const prices = s.prices[target.seller].map((p, t) => agentTier(t, t === target.tier ? op.price : p))
              const actual = yield* attempt(
                Effect.flatMap(Catalog, (c) =>
                  c.update(agents[target.seller].caller, agents[target.seller].service.id, { tiers: prices } as never)
                ).pipe(Effect.as({ _tag: "ok" } as Actual))
              )
              return { actual, apply: (st: M.State) => M.reprice(st, target.seller, target.tier, op.price) }
            }
            case "paidCall": {
              const caller = agents[op.buyer].caller
              const body = {
                serviceId: serviceOf(op.seller),
                tierId: tierIdOf(op.seller, op.tier),
                input: { n: 1 },
                body: "{}",
                credentialHeader: undefined
              }
              const actual = yield* attempt(
                Effect.gen(function* () {
                  const mpp = yield* Mpp
                  const first = yield* Effect.flip(mpp.invoke(caller, { ...body, credential: undefined }))
                  if (first._tag !== "PaymentRequired") return yield* Effect.fail(first)
                  const paid = yield* mpp.invoke(caller, { ...body, credential: makeCredential(first.challenge) })
                  // A paid call of an agent's service may be an order: its seller delivers it at once.
                  if ("heldCents" in paid)
                    return yield* fulfil("now", { _tag: "ordered", price: paid.heldCents, txId: paid.transactionId })
                  return { _tag: "completed", price: paid.chargedCents, txId: paid.transactionId } as Actual
                })
              )
              return { actual, apply: (st: M.State) => M.paidCall(st, op, idsOf(actual).txId) }
            }
            case "buyNegotiated": {
              const list = [...s.negotiations.values()]
              if (list.length === 0) return undefined
              const n = list[op.pick % list.length]
              const b: M.Buy = {
                buyer: n.buyer,
                seller: n.seller,
                tier: n.tier,
                key: null,
                simulate: op.simulate,
                answer: op.answer ?? "now"
              }
              const actual = yield* attempt(buyEffect(b, n.id))
              return { actual, apply: (st: M.State) => M.buy(st, b, idsOf(actual), n.id) }
            }
            case "answer": {
              const o = pickOrder(op.pick, op.pending)
              if (o === undefined) return undefined
              return yield* answerOne(o, op.answers[0])
            }
            default:
              throw new Error(`not a simple op: ${op._tag}`)
          }
        })

      /** Twin negotiations, with and without terms: the seller must answer both alike (terms give no discount); the buyer accepts a counter. */
      const negotiate = (op: Extract<Op, { _tag: "negotiate" }>) =>
        within(
          Effect.gen(function* () {
            const n = yield* Negotiations
            const caller = agents[op.buyer].caller
            const list = model.s.prices[op.seller][op.tier]
            const body = {
              serviceId: serviceOf(op.seller),
              tierId: tierIdOf(op.seller, op.tier),
              proposedPriceCents: Math.max(1, Math.floor((list * op.offerPct) / 100))
            }
            const withTerms = yield* n.open(caller, { ...body, terms: op.terms })
            const plain = yield* n.open(caller, body)
            yield* n.runDue()
            // An agent's service has a live seller: it answers itself at once (it accepts the offer)
            // instead of leaving the automatic answer to the end of its window.
            if (op.seller !== M.PLATFORM)
              for (const id of [withTerms.id, plain.id])
                if ((yield* n.get(caller.agentId!, id)).status === "awaiting_seller")
                  yield* n.respond(agents[op.seller].caller, id, { action: "accept" })
            const settle = (id: string) =>
              Effect.gen(function* () {
                const r = yield* n.get(caller.agentId!, id)
                return r.status === "awaiting_buyer" ? yield* n.respond(caller, id, { action: "accept" }) : r
              })
            const a = yield* settle(withTerms.id)
            const b = yield* settle(plain.id)
            const seller = (x: typeof a) =>
              x.history.filter((h) => h.by === "seller").map((h) => [h.action, h.priceCents])
            if (
              a.status !== b.status ||
              a.agreedPriceCents !== b.agreedPriceCents ||
              JSON.stringify(seller(a)) !== JSON.stringify(seller(b))
            ) {
              throw diverge("terms changed the seller's answer", {
                terms: op.terms,
                list,
                withTerms: [a.status, a.agreedPriceCents, seller(a)],
                without: [b.status, b.agreedPriceCents, seller(b)]
              })
            }
            return [a, b].filter((x) => x.status === "accepted").map((x) => ({ id: x.id, price: x.agreedPriceCents! }))
          })
        )

      /**
       * Every order of the run against the model: its status; its escrow holds its price while
       * pending and nothing once ended; it was held once and settled or released at most once (the
       * escrow account's entries); a completed purchase carries the seller's delivery.
       */
      const checkOrders = (where: string, op: Op) =>
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const store = yield* OrderStore
          const commerce = yield* Commerce
          for (const o of model.s.orders.values()) {
            const real = yield* store.get(o.id)
            if (real?.status !== o.status)
              throw diverge(`${where}: order ${o.id}'s status`, { op, real: real?.status, model: o.status })
            const held = yield* ledger.balance(escrowAccount(o.id))
            if (held !== (o.status === "pending" ? o.price : 0))
              throw diverge(`${where}: order ${o.id}'s escrow`, { op, status: o.status, price: o.price, held })
            const kinds = (yield* ledger.entriesFor(escrowAccount(o.id), { limit: 10 })).map((e) => e.kind).sort()
            const once =
              o.status === "pending"
                ? ["escrow_hold"]
                : ["escrow_hold", o.status === "delivered" ? "escrow_settle" : "escrow_release"].sort()
            if (JSON.stringify(kinds) !== JSON.stringify(once))
              throw diverge(`${where}: order ${o.id} was not held once and ended once`, { op, kinds, status: o.status })
            if (o.status === "pending") continue
            // A fair market: the purchase is judged by the promise it was sold with, and the seller's
            // latency runs from when the order reached it (a pull seller answering without listing:
            // from the placing; an expiry: to the deadline). The model's sellers are pull sellers: their
            // expiries are theirs (accountable), as a pull order is the seller's from its placing.
            const judged = yield* commerce.getTransaction(ids[o.buyer], o.id)
            if (judged.sla?.p95LatencyMs !== M.AGENT_P95_MS[o.tier])
              throw diverge(`${where}: order ${o.id}'s purchase is not judged by the promise it was sold with`, {
                op,
                sla: judged.sla,
                promised: M.AGENT_P95_MS[o.tier]
              })
            const ended = real!
            const from = Date.parse(ended.offeredAt ?? ended.createdAt)
            const to = o.status === "expired" ? o.deadlineAt : Date.parse(ended.answeredAt!)
            if (ended.latencyMs !== to - from || judged.delivery?.latencyMs !== ended.latencyMs)
              throw diverge(`${where}: order ${o.id}'s latency is not the seller's`, {
                op,
                order: ended.latencyMs,
                delivery: judged.delivery?.latencyMs,
                expected: to - from
              })
            if (o.status !== "delivered") continue
            const tx = judged
            if (tx.delivery?.success !== true || JSON.stringify(tx.delivery.output) !== JSON.stringify(o.output))
              throw diverge(`${where}: order ${o.id}'s purchase does not carry the seller's first delivery`, {
                op,
                delivery: tx.delivery,
                model: o.output
              })
          }
        })

      const check = (step: number, op: Op) =>
        within(
          Effect.gen(function* () {
            const ledger = yield* Ledger
            const wallet = yield* Wallet
            const commerce = yield* Commerce
            const sagas = yield* Sagas
            const s = model.s
            const where = `step ${step} (${op._tag})`
            for (let i = 0; i < ids.length; i++) {
              const balance = yield* ledger.balance(walletAccount(ids[i]))
              if (balance !== s.balances[i])
                throw diverge(`${where}: party ${i}'s balance`, { op, real: balance, model: s.balances[i] })
              if (i === M.PLATFORM) continue
              const view = yield* wallet.view(ids[i])
              if (
                view.spentTodayCents !== M.spentToday(s, i) ||
                view.spentThisMonthCents !== M.spentThisMonth(s, i) ||
                view.heldCents !== M.held(s, i)
              ) {
                throw diverge(`${where}: agent ${i}'s spend and held`, {
                  op,
                  real: [view.spentTodayCents, view.spentThisMonthCents, view.heldCents],
                  model: [M.spentToday(s, i), M.spentThisMonth(s, i), M.held(s, i)]
                })
              }
              const bought = yield* commerce.listTransactions(ids[i], { role: "buyer", limit: 500 })
              const expected = [...s.txs.values()].filter((t) => t.buyer === i)
              const seenIds = new Set(bought.data.map((t) => t.id))
              if (
                seenIds.size !== bought.data.length ||
                bought.data.length !== expected.length ||
                expected.some((t) => !seenIds.has(t.id))
              ) {
                throw diverge(`${where}: agent ${i}'s purchases`, {
                  op,
                  real: bought.data.map((t) => [t.id, t.status, t.priceCents]),
                  model: expected.map((t) => [t.id, t.status, t.price])
                })
              }
              for (const t of bought.data) {
                const m = s.txs.get(t.id)!
                // The shares too while they stand (a pending purchase has none yet; a refund reverses them).
                const shares = t.status === "refunded" ? [] : [t.sellerCents, t.feeCents]
                const modelShares = m.status === "refunded" ? [] : [m.sellerCents, m.feeCents]
                if (m.status !== t.status || m.price !== t.priceCents || `${shares}` !== `${modelShares}`)
                  throw diverge(`${where}: transaction ${t.id}`, {
                    op,
                    real: [t.status, t.priceCents, ...shares],
                    model: [m.status, m.price, ...modelShares]
                  })
              }
              const holds: Array<Hold> = []
              for (const id of sagaIds[i]) {
                const g = yield* sagas.get(ids[i], id)
                const m = s.sagas.get(id)!
                if (g.status !== m.status)
                  throw diverge(`${where}: saga ${id}'s status`, { op, real: [g.status, g.failure], model: m })
                holds.push({
                  sagaId: id,
                  heldCents: yield* ledger.balance(escrowAccount(id)),
                  transactionId: g.transactionId
                })
              }
              // An order's escrow is a hold too; delivered, it is its own transaction.
              for (const o of s.orders.values()) {
                if (o.buyer === i)
                  holds.push({
                    sagaId: o.id,
                    heldCents: yield* ledger.balance(escrowAccount(o.id)),
                    transactionId: o.id
                  })
              }
              checkOwnersPromises(where, seen, i, s.now, s.policies[i], bought.data, holds)
            }
            yield* checkOrders(where, op)
            const fees = (yield* ledger.balance(PLATFORM_FEES)) - fees0
            if (fees !== s.fees) throw diverge(`${where}: platform fees`, { op, real: fees, model: s.fees })
            const c = yield* ledger.check
            if (!c.ok || c.totalCents !== 0) throw diverge(`${where}: ledger check`, { op, check: c })
            const sql = sqlOf()
            if (sql._tag === "Some") {
              count(stats, "checked by SQL")
              const expected = new Map<string, number>(ids.map((id, i) => [walletAccount(id), s.balances[i]]))
              for (const g of s.sagas.values()) expected.set(escrowAccount(g.id), g.status === "running" ? g.price : 0)
              for (const o of s.orders.values()) expected.set(escrowAccount(o.id), o.status === "pending" ? o.price : 0)
              // The whole ledger (a full scan) after an injected fault and at the end of the run.
              yield* checkLedgerSql(
                sql.value,
                where,
                expected,
                { account: PLATFORM_FEES, base: sqlFees0, delta: s.fees },
                op._tag === "fault" || step === sc.ops.length - 1
              )
            }
          })
        )

      /** The clock moves to `t`; sagas due by then are driven (as the worker would), not the order sweep. */
      const advanceTo = (t: number) =>
        Effect.gen(function* () {
          world.now = t
          model.s.now = world.now
          yield* runDue
          const txIds = new Map<string, string | null>()
          for (const g of model.s.sagas.values()) {
            if (g.status === "running")
              txIds.set(g.id, (yield* within(Effect.flatMap(Sagas, (x) => x.get(ids[g.buyer], g.id)))).transactionId)
          }
          M.runDueSagas(model.s, txIds)
        })
      /** The expiry sweep, run until nothing more is due (a batch is bounded): how many it expired. */
      const sweep = Effect.flatMap(Orders, (orders) =>
        Effect.gen(function* () {
          let n = 0
          for (let k = yield* orders.expireDue; k > 0; k = yield* orders.expireDue) n += k
          return { _tag: "expired", count: n } as Actual
        })
      )
      /** One answer compared with the model's, and applied to it. */
      const compareAnswer = (where: string, op: Op, o: M.Order, a: Answer) =>
        Effect.gen(function* () {
          const done = yield* answerOne(o, a)
          count(stats, `${op._tag}${op._tag === "late" ? ` ${op.by}` : ""}→${label(done.actual)}`)
          const trial = M.clone(model.s)
          const expected = done.apply(trial)
          if (!matches(expected, done.actual))
            throw diverge(`${where}: answer`, { op, a, expected, actual: done.actual })
          model.s = trial
        })

      for (const [step, op] of sc.ops.entries()) {
        count(stats, `op:${op._tag}`)
        if (process.env.MODEL_TRACE === "1")
          console.log(`[money model ${storage.name}] step ${step}: ${JSON.stringify(op)}`)
        switch (op._tag) {
          case "advance":
            yield* advanceTo(world.now + op.ms)
            break
          case "answer": {
            const o = pickOrder(op.pick, op.pending)
            if (o === undefined) break
            if (!op.concurrent || op.answers.length < 2) {
              for (const a of op.answers) yield* compareAnswer(`step ${step}`, op, o, a)
              break
            }
            // Both answers at once: one ends the order, the other finds it ended; some serial order explains them.
            const answers = yield* within(
              Effect.all(
                op.answers.map((a) => attempt(answerEffect(o, a))),
                { concurrency: "unbounded" }
              )
            )
            for (const a of answers) count(stats, `answers at once→${label(a)}`)
            let explained: M.State | undefined
            for (const order of permutations(answers.map((_, i) => i))) {
              const trial = M.clone(model.s)
              const a = op.answers
              if (order.every((i) => matches(M.answerOrder(trial, o.id, a[i].what, outputOf(a[i])), answers[i]))) {
                explained = trial
                break
              }
            }
            if (explained === undefined)
              throw diverge(`step ${step}: no serial order explains the answers`, { op, order: o, answers })
            model.s = explained
            break
          }
          case "late": {
            const waiting = [...model.s.orders.values()].filter((o) => o.status === "pending")
            if (waiting.length === 0) break
            const o = waiting[op.pick % waiting.length]
            yield* advanceTo(Math.max(world.now, o.deadlineAt + op.by))
            if (op.sweep !== true) {
              yield* compareAnswer(`step ${step}`, op, o, op.answer)
              break
            }
            // The answer and the sweep at once: the order ends once, some serial order explains both.
            const [answered, swept] = yield* within(
              Effect.all([attempt(answerEffect(o, op.answer)), attempt(sweep)], { concurrency: "unbounded" })
            )
            count(
              stats,
              `late ${op.by} with the sweep→${label(answered)}, ${swept._tag === "expired" ? swept.count : label(swept)}`
            )
            const answerFirst = M.clone(model.s)
            const sweepFirst = M.clone(model.s)
            const explained = [
              matches(M.answerOrder(answerFirst, o.id, op.answer.what, outputOf(op.answer)), answered) &&
              matches(M.expireDue(answerFirst), swept)
                ? answerFirst
                : undefined,
              matches(M.expireDue(sweepFirst), swept) &&
              matches(M.answerOrder(sweepFirst, o.id, op.answer.what, outputOf(op.answer)), answered)
                ? sweepFirst
                : undefined
            ].find((x) => x !== undefined)
            if (explained === undefined)
              throw diverge(`step ${step}: no serial order explains the answer and the sweep`, { op, answered, swept })
            model.s = explained
            break
          }
          case "expire": {
            yield* advanceTo(world.now + op.ms)
            const actual = yield* attempt(sweep)
            const trial = M.clone(model.s)
            const expected = M.expireDue(trial)
            count(stats, `expire→${actual._tag === "expired" ? actual.count : label(actual)}`)
            if (!matches(expected, actual)) throw diverge(`step ${step}: the expiry sweep`, { op, expected, actual })
            model.s = trial
            break
          }
          case "restart":
            yield* restart
            break
          case "concurrent":
          case "sagas": {
            const effects =
              op._tag === "concurrent"
                ? op.buys.map((b) => attempt(buyEffect(b)))
                : op.starts.map((g) => attempt(sagaEffect(g)))
            const answers = yield* within(Effect.all(effects, { concurrency: "unbounded" }))
            const apply = (st: M.State, i: number) =>
              op._tag === "concurrent"
                ? M.buy(st, op.buys[i], idsOf(answers[i]))
                : M.startSaga(st, op.starts[i], idsOf(answers[i]))
            // Some serial order of them must explain every answer. Orders that answer alike may still
            // differ in who sold what (two buys under one key: either is the first); the purchases recorded decide.
            const sellers = new Map<string, string>()
            for (const [i, a] of answers.entries()) {
              const txId = idsOf(a).txId
              if (op._tag !== "concurrent" || txId === undefined || model.s.txs.has(txId) || sellers.has(txId)) continue
              const tx = yield* within(Effect.flatMap(Commerce, (c) => c.getTransaction(ids[op.buys[i].buyer], txId)))
              sellers.set(txId, tx.sellerAgentId)
            }
            // Orders that answer alike may also leave different balances: an auto-recharge fires or not as a
            // buyer's purchase lands before or after its earnings from another purchase in the burst. The
            // balances the wallets hold decide between them (the check after the step still compares all).
            const balances = yield* within(
              Effect.flatMap(Ledger, (l) => Effect.forEach(ids, (id) => l.balance(walletAccount(id))))
            )
            let explained: M.State | undefined
            let explainedBalances = false
            for (const order of permutations(answers.map((_, i) => i))) {
              const trial = M.clone(model.s)
              if (
                order.every((i) => matches(apply(trial, i), answers[i])) &&
                [...sellers].every(([txId, seller]) => ids[trial.txs.get(txId)!.seller] === seller)
              ) {
                const sameBalances = balances.every((b, i) => trial.balances[i] === b)
                if (explained === undefined || (sameBalances && !explainedBalances)) {
                  explained = trial
                  explainedBalances = sameBalances
                }
                if (sameBalances) break
              }
            }
            for (const a of answers) count(stats, `${op._tag}→${label(a)}`)
            if (explained === undefined)
              throw diverge(
                `step ${step}: no serial order explains ${op._tag === "concurrent" ? "concurrent purchases" : "the sagas"}`,
                { op, answers }
              )
            if (op._tag === "sagas")
              for (const a of answers) if (a._tag === "sagaRun") sagaIds[op.starts[0].buyer].push(a.sagaId)
            model.s = explained
            break
          }
          case "negotiate": {
            const accepted = yield* negotiate(op)
            count(stats, `negotiate→${accepted.length === 0 ? "none" : "accepted"}`)
            for (const x of accepted)
              M.negotiated(model.s, { id: x.id, buyer: op.buyer, seller: op.seller, tier: op.tier, price: x.price })
            break
          }
          case "fault": {
            faults.armed = op.point
            faults.tripped = false
            const done = yield* perform(op.op)
            faults.armed = undefined
            if (done === undefined) break
            count(stats, faults.tripped ? `fault tripped:${op.point}` : `fault not reached:${op.point}`)
            if (faults.tripped) {
              // The write happened and the unit of work failed: it must leave no trace (checked below against the unchanged model).
              if (done.actual._tag !== "unavailable")
                throw diverge(`step ${step}: a tripped fault answered`, { op, actual: done.actual })
              // A dispute opened in its own unit of work before the failed refund stays open.
              if (op.op._tag === "refund") {
                const tx = [...model.s.txs.values()][op.op.pick % model.s.txs.size]
                if (
                  tx.dispute === "none" &&
                  tx.status === "completed" &&
                  model.s.now - tx.createdAt <= M.FILING_WINDOW_MS
                )
                  tx.dispute = "open"
              }
            } else {
              const expected = done.apply(model.s)
              if (!matches(expected, done.actual))
                throw diverge(`step ${step}: answer`, { op, expected, actual: done.actual })
            }
            break
          }
          default: {
            const done = yield* perform(op)
            if (done === undefined) break
            count(stats, `${op._tag}→${label(done.actual)}`)
            const trial = M.clone(model.s)
            const expected = done.apply(trial)
            if (!matches(expected, done.actual))
              throw diverge(`step ${step}: answer`, { op, expected, actual: done.actual })
            model.s = trial
          }
        }
        yield* check(step, op)
      }
    } finally {
      // Sagas still holding escrow finish now, so that none settles inside a later run (whose fees and platform balance it would move).
      // Orders still pending expire now too (the longest deadline is an hour), refunded within this run.
      world.now += M.DAY_MS
      yield* Effect.ignore(runDue)
      yield* Effect.ignore(
        within(
          Effect.flatMap(Orders, (orders) =>
            Effect.gen(function* () {
              while ((yield* orders.expireDue) > 0) {}
            })
          )
        )
      )
      yield* Scope.close(scope, Exit.void)
    }
  })

export const property = (c: StorageCase, arb: fc.Arbitrary<Scenario>, params: fc.Parameters<[Scenario]>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const storage = yield* storageFor(c)
      const stats: Stats = new Map()
      const services = yield* Effect.context<never>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(arb, (sc) => Effect.runPromiseWith(services)(run(stats, storage, sc))),
          params
        )
      )
      return stats
    })
  ) as Effect.Effect<Stats, unknown>
