// Reference-model test of the money path, on every storage: fast-check generates random sequences
// of purchases (with idempotency keys and failed deliveries), top-ups, policy changes, approvals,
// declines, refunds through disputes, clock jumps, concurrent purchases, injected storage failures
// and restarts; each runs against the real services and the pure model (model.ts) side by side,
// and after every step balances, fees, spend totals and purchase counts must equal the model's and
// the ledger check must pass. MODEL_RUNS / MODEL_OPS (ops per run) / MODEL_SEED size and replay a
// run (`npm run test:model -- --help`); a failure prints the seed and the shrunk operations.
import { Clock, Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import fc from "fast-check"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, it } from "vitest"
import { StorageUnavailable } from "../../src/schema/errors.js"
import { PLATFORM_FEES, walletAccount } from "../../src/schema/ledger.js"
import { MemoryStorageLive } from "../../src/layers/storage/memory/index.js"
import { PgStorageLive } from "../../src/layers/storage/postgres/index.js"
import { EmbeddedStorageLive } from "../../src/layers/storage/embedded.js"
import { AppConfig } from "../../src/services/AppConfig.js"
import { Commerce, CommerceStore } from "../../src/services/Commerce.js"
import { Ids } from "../../src/services/Db.js"
import { Disputes } from "../../src/services/Disputes.js"
import { Ledger, LedgerStore } from "../../src/services/Ledger.js"
import { SettlementStore } from "../../src/services/Settlement.js"
import { Wallet, WalletStore } from "../../src/services/Wallet.js"
import { freshDatabase, storageCases, type StorageCase } from "../fixtures/db.js"
import { commerceServices, fundedBuyer, ownerCaller, sellerWith, tier } from "../fixtures/money.js"
import * as M from "./model.js"

const RUNS = Number(process.env.MODEL_RUNS ?? 12)
const OPS = Number(process.env.MODEL_OPS ?? 30)
const SEED = process.env.MODEL_SEED !== undefined ? Number(process.env.MODEL_SEED) : Math.floor(Math.random() * 2 ** 31)

// ---- operations ---------------------------------------------------------------------------------

type FaultPoint = "settlement" | "ledger" | "wallet" | "approval"
type Op =
  | { readonly _tag: "buy"; readonly b: M.Buy }
  | { readonly _tag: "topup"; readonly agent: number; readonly amount: number }
  | { readonly _tag: "policy"; readonly agent: number; readonly policy: M.Policy }
  | { readonly _tag: "approve" | "decline"; readonly pick: number }
  | { readonly _tag: "refund"; readonly pick: number }
  | { readonly _tag: "advance"; readonly ms: number }
  | { readonly _tag: "concurrent"; readonly buys: ReadonlyArray<M.Buy> }
  | { readonly _tag: "fault"; readonly point: FaultPoint; readonly op: Op }
  | { readonly _tag: "restart" }

const agentArb = fc.integer({ min: 0, max: M.AGENTS - 1 })
const buyArb: fc.Arbitrary<M.Buy> = fc
  .record({
    buyer: agentArb,
    offset: fc.integer({ min: 1, max: M.AGENTS - 1 }),
    tier: fc.integer({ min: 0, max: M.TIERS - 1 }),
    key: fc.option(fc.constantFrom("k1", "k2", "k3"), { freq: 2 }),
    // A failed delivery (nothing charged) one purchase in eight.
    fail: fc.nat({ max: 7 }).map((n) => n === 0)
  })
  .map((r) => ({ buyer: r.buyer, seller: (r.buyer + r.offset) % M.AGENTS, tier: r.tier, key: r.key, fail: r.fail }))
// Prices and limits come from one small set of round numbers, with their neighbours, so purchases
// land exactly on a limit, threshold or balance often (a boundary mistake is then caught quickly).
const PRICES = [1, 99, 100, 101, 250, 300, 499, 500, 501] as const
const AMOUNTS = [100, 250, 300, 500, 600, 1_000, 1_500, 2_000] as const
/** Mostly none: a restriction that refuses everything hides the rest of the path. */
const rarely = <A>(arb: fc.Arbitrary<A>) => fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb })
const limitArb = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.constantFrom(...PRICES) }, { weight: 1, arbitrary: fc.constantFrom(...AMOUNTS) })
const policyArb: fc.Arbitrary<M.Policy> = fc.record({
  perTransactionLimitCents: limitArb,
  dailyLimitCents: limitArb,
  monthlyLimitCents: limitArb,
  allowedSellers: rarely(fc.subarray([0, 1, 2])),
  allowedCategories: rarely(fc.subarray([...M.CATEGORIES])),
  approvalThresholdCents: fc.constantFrom(0, ...PRICES),
  autonomyLevel: fc.constantFrom<M.Autonomy>("full_auto", "semi_auto", "manual"),
  autoRecharge: fc.record({ enabled: fc.boolean(), thresholdCents: fc.constantFrom(0, ...AMOUNTS), amountCents: fc.constantFrom(...AMOUNTS) })
})
const simpleOpArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: buyArb.map((b) => ({ _tag: "buy" as const, b })) },
  { weight: 2, arbitrary: fc.record({ agent: agentArb, amount: fc.constantFrom(...PRICES, ...AMOUNTS) }).map((r) => ({ _tag: "topup" as const, ...r })) },
  { weight: 3, arbitrary: fc.record({ agent: agentArb, policy: policyArb }).map((r) => ({ _tag: "policy" as const, ...r })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ _tag: "approve" as const, pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ _tag: "decline" as const, pick })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ _tag: "refund" as const, pick })) }
)
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 20, arbitrary: simpleOpArb },
  { weight: 3, arbitrary: fc.constantFrom(3_600_000, M.DAY_MS, 8 * M.DAY_MS, 20 * M.DAY_MS).map((ms) => ({ _tag: "advance" as const, ms })) },
  { weight: 3, arbitrary: fc.array(buyArb, { minLength: 2, maxLength: 4 }).map((buys) => ({ _tag: "concurrent" as const, buys })) },
  { weight: 3, arbitrary: fc.record({ point: fc.constantFrom<FaultPoint>("settlement", "ledger", "wallet", "approval"), op: simpleOpArb }).map((r) => ({ _tag: "fault" as const, ...r })) },
  { weight: 1, arbitrary: fc.constant({ _tag: "restart" as const }) }
)
const scenarioArb = fc.record({
  // A start somewhere in 2026, so days and months turn over during a run.
  start: fc.integer({ min: 0, max: 364 }).map((d) => Date.UTC(2026, 0, 1) + d * M.DAY_MS + 6 * 3_600_000),
  prices: fc.array(fc.array(fc.constantFrom(...PRICES), { minLength: M.TIERS, maxLength: M.TIERS }), { minLength: M.AGENTS, maxLength: M.AGENTS }),
  funding: fc.array(fc.constantFrom(0, ...PRICES, ...AMOUNTS), { minLength: M.AGENTS, maxLength: M.AGENTS }),
  ops: fc.array(opArb, { minLength: Math.ceil(OPS / 2), maxLength: OPS })
})
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer A> ? A : never

// ---- the system under test: stores (kept across restarts) with fault points, services on top ----

interface Faults {
  armed: FaultPoint | undefined
  tripped: boolean
}

/** The stores with a fault point on the writes each path ends with: the write is done, then fails (the unit of work must roll it back). */
const withFaults = (stores: Context.Context<any>, faults: Faults): Context.Context<any> => {
  const trip = (point: FaultPoint) =>
    Effect.suspend(() => {
      if (faults.armed !== point) return Effect.void
      faults.armed = undefined
      faults.tripped = true
      return Effect.fail(new StorageUnavailable({ message: `injected fault after the ${point} write` }))
    })
  const settlement = Context.get(stores, SettlementStore)
  const ledger = Context.get(stores, LedgerStore)
  const wallet = Context.get(stores, WalletStore)
  const commerce = Context.get(stores, CommerceStore)
  let ctx = Context.add(stores, SettlementStore, { ...settlement, write: (x) => Effect.andThen(settlement.write(x), trip("settlement")) })
  ctx = Context.add(ctx, LedgerStore, { ...ledger, append: (e) => Effect.andThen(ledger.append(e), trip("ledger")) })
  ctx = Context.add(ctx, WalletStore, { ...wallet, put: (w) => Effect.andThen(wallet.put(w), trip("wallet")) })
  return Context.add(ctx, CommerceStore, { ...commerce, updateApproval: (a) => Effect.andThen(commerce.updateApproval(a), trip("approval")) })
}

/** Storage for one case: `open` builds the stores in a scope; a restart closes it and opens again over the same data (memory: the same stores). */
const storageFor = (c: StorageCase) =>
  Effect.gen(function* () {
    if (c.name === "memory") {
      const stores = yield* Layer.build(MemoryStorageLive.pipe(Layer.provideMerge(AppConfig.test({ storage: "memory" }))))
      return { open: (_scope: Scope.Scope) => Effect.succeed(stores as Context.Context<any>), restartsData: false }
    }
    if (c.name === "embedded") {
      const dir = mkdtempSync(join(tmpdir(), "model-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const layer = EmbeddedStorageLive.pipe(Layer.provideMerge(AppConfig.test({ storage: "embedded", dataDir: dir })))
      return { open: (scope: Scope.Scope) => Layer.buildWithScope(layer, scope) as Effect.Effect<Context.Context<any>, unknown>, restartsData: true }
    }
    const { url } = yield* freshDatabase
    const layer = PgStorageLive.pipe(Layer.provideMerge(AppConfig.test({ storage: "postgres", databaseUrl: Option.some(Redacted.make(url)) })))
    return { open: (scope: Scope.Scope) => Layer.buildWithScope(layer, scope) as Effect.Effect<Context.Context<any>, unknown>, restartsData: true }
  })

const servicesLayer = commerceServices.pipe(Layer.provideMerge(Ids.Live)) as unknown as Layer.Layer<any, unknown, any>

// ---- comparing an answer with the model's ----------------------------------------------------------

type Actual = M.Outcome | { readonly _tag: "unavailable" }

const fromPurchase = (p: { readonly status: string; readonly transaction: { readonly id: string; readonly priceCents: number } | null; readonly approval: { readonly id: string; readonly reason: string } | null }): Actual =>
  p.status === "pending_approval"
    ? { _tag: "pending", reason: p.approval!.reason as "manual", approvalId: p.approval!.id }
    : p.status === "failed"
      ? { _tag: "failed", txId: p.transaction!.id }
      : { _tag: "completed", price: p.transaction!.priceCents, txId: p.transaction!.id }

const fromError = (e: unknown): Actual => {
  const err = e as { readonly _tag: string; readonly policy?: string; readonly state?: string }
  if (err._tag === "StorageUnavailable") return { _tag: "unavailable" }
  return { _tag: "refused", error: err._tag, ...(err.policy !== undefined ? { policy: err.policy } : {}), ...(err.state !== undefined ? { state: err.state } : {}) }
}

const matches = (expected: M.Outcome, actual: Actual): boolean => {
  switch (expected._tag) {
    case "completed":
      return actual._tag === "completed" && actual.price === expected.price
    case "failed":
      return actual._tag === "failed"
    case "pending":
      return actual._tag === "pending" && actual.reason === expected.reason
    case "replayTx":
      return (actual._tag === "completed" || actual._tag === "failed") && actual.txId === expected.txId
    case "replayApproval":
      return actual._tag === "pending" && actual.approvalId === expected.approvalId
    case "refused":
      return actual._tag === "refused" && actual.error === expected.error && (expected.policy === undefined || actual.policy === expected.policy) && (expected.state === undefined || actual.state === expected.state)
    case "ok":
      return actual._tag === "ok"
  }
}

const idsOf = (a: Actual) => ({ txId: "txId" in a ? a.txId : undefined, approvalId: "approvalId" in a ? a.approvalId : undefined })

class Divergence extends Error {}
const diverge = (what: string, detail: unknown) => new Divergence(`${what}: ${JSON.stringify(detail)}`)

// ---- one run --------------------------------------------------------------------------------------

/** What the runs exercised (printed at the end): answers by kind, and the operations by kind. */
type Stats = Map<string, number>
const count = (stats: Stats, k: string) => stats.set(k, (stats.get(k) ?? 0) + 1)
const label = (a: Actual) => (a._tag === "refused" ? `refused:${a.error}${"policy" in a && a.policy ? `:${a.policy}` : ""}${"state" in a && a.state ? `:${a.state}` : ""}` : a._tag)

const run = (stats: Stats, storage: { readonly open: (scope: Scope.Scope) => Effect.Effect<Context.Context<any>, unknown>; readonly restartsData: boolean }, sc: Scenario) =>
  Effect.gen(function* () {
    const faults: Faults = { armed: undefined, tripped: false }
    const world = { now: sc.start }
    const real = yield* Clock.Clock
    // The model's clock for every operation (layers are built on the real one: pools time out on it).
    const clock: Clock.Clock = {
      ...real,
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
    const within = <A, E>(effect: Effect.Effect<A, E, any>) => effect.pipe(Effect.provideService(Clock.Clock, clock), Effect.provideContext(ctx)) as Effect.Effect<A, E>
    const restart = Effect.gen(function* () {
      yield* Scope.close(scope, Exit.void)
      scope = yield* Scope.make()
      ctx = yield* open
    })

    try {
      // The world: three agents, each selling one service of three tiers, funded as generated.
      const agents = yield* within(
        Effect.forEach(sc.prices, (prices, i) =>
          Effect.gen(function* () {
            const seller = yield* sellerWith(`Model ${i}`, prices.map((p, t) => tier(`t${t}`, p)), M.CATEGORIES[i % 2])
            if (sc.funding[i] > 0) yield* Effect.flatMap(Wallet, (w) => w.topup(seller.agentId, sc.funding[i]))
            return seller
          })
        )
      )
      const ids = agents.map((a) => a.agentId)
      const fees0 = yield* within(Effect.flatMap(Ledger, (l) => l.balance(PLATFORM_FEES)))
      const model = { s: M.initialState(sc.start, sc.prices, sc.funding) }
      const disputeOf = new Map<string, string>()

      const buyEffect = (b: M.Buy) =>
        Effect.flatMap(Commerce, (c) =>
          c.buy({ caller: agents[b.buyer].caller, serviceId: agents[b.seller].service.id, tierId: `t${b.tier}`, input: b.fail ? { simulate: "fail" } : { n: 1 }, ...(b.key !== null ? { idempotencyReference: b.key } : {}) })
        ).pipe(Effect.map(fromPurchase))
      const attempt = (effect: Effect.Effect<Actual, unknown, any>) => within(Effect.catch(effect, (e) => Effect.succeed(fromError(e))))

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
              const actual = yield* attempt(Effect.flatMap(Wallet, (w) => w.topup(ids[op.agent], op.amount)).pipe(Effect.as({ _tag: "ok" } as Actual)))
              return { actual, apply: (st: M.State) => M.topup(st, op.agent, op.amount) }
            }
            case "policy": {
              const p = op.policy
              const body = { ...p, allowedSellers: p.allowedSellers === null ? null : p.allowedSellers.map((i) => ids[i]) }
              const actual = yield* attempt(Effect.flatMap(Wallet, (w) => w.updatePolicy(ids[op.agent], body as never, { byOwner: true })).pipe(Effect.as({ _tag: "ok" } as Actual)))
              return { actual, apply: (st: M.State) => M.setPolicy(st, op.agent, p) }
            }
            case "approve":
            case "decline": {
              const list = [...s.approvals.values()]
              if (list.length === 0) return undefined
              const a = list[op.pick % list.length]
              const owner = ownerCaller(agents[a.buyer].caller.accountId)
              const actual = yield* attempt(
                Effect.flatMap(Commerce, (c) => (op._tag === "approve" ? c.approve(owner, a.id) : c.decline(owner, a.id))).pipe(
                  Effect.map((r): Actual =>
                    r.transaction === null ? { _tag: "ok" } : r.transaction.status === "failed" ? { _tag: "failed", txId: r.transaction.id } : { _tag: "completed", price: r.transaction.priceCents, txId: r.transaction.id }
                  )
                )
              )
              return { actual, apply: (st: M.State) => (op._tag === "approve" ? M.approve(st, a.id, idsOf(actual).txId) : M.decline(st, a.id)) }
            }
            case "refund": {
              const list = [...s.txs.values()]
              if (list.length === 0) return undefined
              const tx = list[op.pick % list.length]
              const buyer = ids[tx.buyer]
              const seller = ids[tx.seller]
              const actual = yield* attempt(
                Effect.gen(function* () {
                  const disputes = yield* Disputes
                  let id = disputeOf.get(tx.id)
                  if (id === undefined) {
                    id = (yield* disputes.open(buyer, { transactionId: tx.id, reason: "model" })).id
                    disputeOf.set(tx.id, id)
                  }
                  yield* disputes.respond(seller, id, { action: "accept" })
                  return { _tag: "ok" } as Actual
                })
              )
              return { actual, apply: (st: M.State) => M.refund(st, tx.id) }
            }
            default:
              throw new Error(`not a simple op: ${op._tag}`)
          }
        })

      const check = (step: number, op: Op) =>
        within(
          Effect.gen(function* () {
            const ledger = yield* Ledger
            const wallet = yield* Wallet
            const commerce = yield* Commerce
            const s = model.s
            for (let i = 0; i < ids.length; i++) {
              const balance = yield* ledger.balance(walletAccount(ids[i]))
              if (balance !== s.balances[i]) throw diverge(`step ${step}: agent ${i}'s balance`, { op, real: balance, model: s.balances[i] })
              const view = yield* wallet.view(ids[i])
              if (view.spentTodayCents !== M.spentToday(s, i) || view.spentThisMonthCents !== M.spentThisMonth(s, i)) {
                throw diverge(`step ${step}: agent ${i}'s spend`, { op, real: [view.spentTodayCents, view.spentThisMonthCents], model: [M.spentToday(s, i), M.spentThisMonth(s, i)] })
              }
              const bought = yield* commerce.listTransactions(ids[i], { role: "buyer", limit: 100 })
              const expected = [...s.txs.values()].filter((t) => t.buyer === i)
              const seen = new Set(bought.data.map((t) => t.id))
              if (seen.size !== bought.data.length || bought.data.length !== expected.length || expected.some((t) => !seen.has(t.id))) {
                throw diverge(`step ${step}: agent ${i}'s purchases`, { op, real: bought.data.map((t) => [t.id, t.status]), model: expected.map((t) => [t.id, t.status]) })
              }
              for (const t of bought.data) {
                if (s.txs.get(t.id)!.status !== t.status) throw diverge(`step ${step}: transaction ${t.id}'s status`, { op, real: t.status, model: s.txs.get(t.id)!.status })
              }
            }
            const fees = (yield* ledger.balance(PLATFORM_FEES)) - fees0
            if (fees !== s.fees) throw diverge(`step ${step}: platform fees`, { op, real: fees, model: s.fees })
            const c = yield* ledger.check
            if (!c.ok || c.totalCents !== 0) throw diverge(`step ${step}: ledger check`, { op, check: c })
          })
        )

      for (const [step, op] of sc.ops.entries()) {
        count(stats, `op:${op._tag}`)
        switch (op._tag) {
          case "advance":
            world.now += op.ms
            model.s.now = world.now
            break
          case "restart":
            yield* restart
            break
          case "concurrent": {
            const answers = yield* within(Effect.all(op.buys.map((b) => attempt(buyEffect(b))), { concurrency: "unbounded" }))
            // Some serial order of the purchases must explain every answer.
            const orders = permutations(op.buys.map((_, i) => i))
            let explained: M.State | undefined
            for (const order of orders) {
              const trial = M.clone(model.s)
              if (order.every((i) => matches(M.buy(trial, op.buys[i], idsOf(answers[i])), answers[i]))) {
                explained = trial
                break
              }
            }
            for (const a of answers) count(stats, `concurrent buy→${label(a)}`)
            if (explained === undefined) throw diverge(`step ${step}: no serial order explains concurrent purchases`, { buys: op.buys, answers })
            model.s = explained
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
              if (done.actual._tag !== "unavailable") throw diverge(`step ${step}: a tripped fault answered`, { op, actual: done.actual })
              // A dispute opened in its own unit of work before the failed refund stays open.
              if (op.op._tag === "refund") {
                const tx = [...model.s.txs.values()][op.op.pick % model.s.txs.size]
                if (tx.dispute === "none" && tx.status === "completed" && model.s.now - tx.createdAt <= M.FILING_WINDOW_MS) tx.dispute = "open"
              }
            } else {
              const expected = done.apply(model.s)
              if (!matches(expected, done.actual)) throw diverge(`step ${step}: answer`, { op, expected, actual: done.actual })
            }
            break
          }
          default: {
            const done = yield* perform(op)
            if (done === undefined) break
            count(stats, `${op._tag}→${label(done.actual)}`)
            const trial = M.clone(model.s)
            const expected = done.apply(trial)
            if (!matches(expected, done.actual)) throw diverge(`step ${step}: answer`, { op, expected, actual: done.actual })
            model.s = trial
          }
        }
        yield* check(step, op)
      }
    } finally {
      yield* Scope.close(scope, Exit.void)
    }
  })

const permutations = (xs: ReadonlyArray<number>): Array<Array<number>> =>
  xs.length <= 1 ? [[...xs]] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]))

// ---- the test, per storage --------------------------------------------------------------------------

for (const c of storageCases) {
  describe.skipIf(c.skip !== undefined)(`money model [${c.name}]`, () => {
    it(`${RUNS} random runs of up to ${OPS} operations agree with the model (seed ${SEED})`, async () => {
      console.log(`[money model ${c.name}] seed ${SEED}, ${RUNS} runs × ≤ ${OPS} ops; replay: MODEL_SEED=${SEED} MODEL_RUNS=${RUNS} MODEL_OPS=${OPS}`)
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const storage = yield* storageFor(c)
            const stats: Stats = new Map()
            const services = yield* Effect.context<never>()
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(scenarioArb, (sc) => Effect.runPromiseWith(services)(run(stats, storage, sc))),
                { seed: SEED, numRuns: RUNS, endOnFailure: process.env.MODEL_SHRINK === "0", verbose: 1 }
              )
            )
            console.log(`[money model ${c.name}] ${[...stats].sort().map(([k, n]) => `${k} ${n}`).join(", ")}`)
          })
        ) as Effect.Effect<void, unknown>
      )
    }, 60_000 + RUNS * 20_000) // generous: a run is well under a second on memory, a few on Postgres
  })
}
