// What an account owner is promised about an agent's money, on every storage, tried the way a
// careless or hostile agent would (docs/money.md "Limits hold when money moves", docs/commerce.md
// "An approval binds what it shows"):
// - spent + held never passes the daily or monthly limit, however many sagas start at once;
// - an approval charges what the owner saw, or nothing;
// - a buyer cannot decide another agent's delivery (`simulate` acts on platform sellers only);
// - investing and building spend the wallet too, within the same limits.
import { unlimitedWallet } from "../fixtures/money.js"
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { CommerceSeedLive, PLATFORM_SELLERS_ACCOUNT } from "../../src/layers/seed/seedCommerce.js"
import type { PublishServiceBody, UpdateServiceBody } from "../../src/schema/commerce/services.js"
import type { UpdateWalletBody } from "../../src/schema/commerce/wallets.js"
import { cents } from "../../src/schema/platform/common.js"
import { Agent } from "../../src/schema/keys/keys.js"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Builder } from "../../src/services/projects/Builder.js"
import type { Caller } from "../../src/services/keys/Caller.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Events } from "../../src/services/events/Events.js"
import { NegotiationServicesLive } from "../fixtures/services.js"
import { Invest } from "../../src/services/invest/Invest.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { explain } from "../fixtures/explain.js"
import { forEachStorage } from "../fixtures/suite.js"
import { owner, projectSuite } from "../fixtures/projects.js"
import { heldStatement } from "../../src/layers/wallet/WalletStore.postgres.js"

// A seeded service of a platform seller: svc_doc_translate / starter, 1,900 cents, p95 12 s.
const PLATFORM_SERVICE = "svc_doc_translate"
const PLATFORM_TIER = "starter"
const PRICE = 1900

const agentCaller = (agentId: string, accountId: string): Caller => ({
  accountId,
  agentId,
  keyId: `key_${agentId}`,
  permissions: new Set(["commerce:read", "commerce:buy", "commerce:sell"]),
  via: "key"
})
const ownerSession = (accountId: string): Caller => ({
  accountId,
  agentId: undefined,
  keyId: undefined,
  permissions: new Set(),
  via: "session"
})

const tier = (id: string, priceCents: number) => ({
  id,
  name: id,
  priceCents,
  unit: "call",
  includedUnits: null,
  sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
})
const body = (
  name: string,
  tiers: ReadonlyArray<ReturnType<typeof tier>>,
  fulfilment: PublishServiceBody["fulfilment"] = { mode: "pull" }
): PublishServiceBody =>
  ({
    name,
    description: `${name}, published by an agent`,
    category: "testing",
    pricingModel: "per_call",
    tags: [],
    tiers,
    negotiation: { floorPct: 80, counterStepPct: 20 },
    fulfilment
  }) as unknown as PublishServiceBody

forEachStorage(
  "owner promises (commerce)",
  (storage) =>
    Layer.mergeAll(Commerce.layer, Orders.layer).pipe(
      Layer.provideMerge(NegotiationServicesLive),
      Layer.provideMerge(CatalogOffersLive),
      Layer.provideMerge(Wallet.layer),
      Layer.provideMerge(Layer.mergeAll(Catalog.layer, Ledger.layer, Events.layer, Keys.layer)),
      Layer.provideMerge(CommerceSeedLive),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    /** An agent of its own account (not the platform's), funded with `cents`. */
    const agent = (funds: number) =>
      Effect.gen(function* () {
        const keys = yield* Keys
        const ids = yield* Ids
        const account = yield* keys.signUp({
          email: `${yield* ids.make("o")}@example.com`.toLowerCase(),
          password: "correct horse battery",
          name: "Owner"
        })
        const { id: agentId } = yield* keys.createAgent(account.id, { name: "an agent" })
        yield* unlimitedWallet(agentId)
        if (funds > 0)
          yield* Effect.flatMap(Ledger, (l) =>
            l.transfer({
              kind: "grant",
              reference: `fund-${agentId}`,
              from: EXTERNAL_GRANTS,
              to: walletAccount(agentId),
              amount: funds
            })
          )
        return { agentId, accountId: account.id, caller: agentCaller(agentId, account.id) }
      })
    /** A simulated seller (an agent of the platform sellers account): where approvals, not fulfilment, are tested. */
    const platformSeller = Effect.gen(function* () {
      const agentId = yield* Effect.flatMap(Ids, (ids) => ids.make("agt"))
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* Effect.flatMap(KeysStore, (k) =>
        k.insertAgent(
          Agent.make({
            id: agentId,
            accountId: PLATFORM_SELLERS_ACCOUNT,
            name: "seller",
            organization: null,
            createdAt
          })
        )
      )
      return { agentId, accountId: PLATFORM_SELLERS_ACCOUNT, caller: agentCaller(agentId, PLATFORM_SELLERS_ACCOUNT) }
    })
    const setPolicy = (agentId: string, policy: UpdateWalletBody) =>
      Effect.flatMap(Wallet, (w) => w.updatePolicy(agentId, policy, { byOwner: true }))
    const balance = (agentId: string) => Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId)))
    /**
     * The owner's promise for a day in which the agent was funded once with `funded` and has sold
     * nothing: what has left the wallet (settled or held in escrow) is within the limit. Read from
     * the ledger balance, not from the service's own spend figures; the wallet view must agree.
     */
    const withinDailyLimit = (agentId: string, funded: number, limit: number) =>
      Effect.gen(function* () {
        const out = funded - (yield* balance(agentId))
        expect(out).toBeLessThanOrEqual(limit)
        const v = yield* Effect.flatMap(Wallet, (w) => w.view(agentId))
        expect(v.spentTodayCents + v.heldCents).toBe(out)
        return v
      })

    it.effect(
      "12 sagas at once against a daily limit of 3 prices: spent + held never passes it, 3 settle, 9 are refused and charge nothing",
      () =>
        Effect.gen(function* () {
          const sagas = yield* Sagas
          const buyer = yield* agent(100 * PRICE)
          const limit = 3 * PRICE
          yield* setPolicy(buyer.agentId, { dailyLimitCents: cents(limit) })
          // A slow seller: each saga holds its escrow while it waits for the delivery.
          const started = yield* Effect.forEach(
            Array.from({ length: 12 }, () => 0),
            () =>
              sagas.start(buyer, {
                serviceId: PLATFORM_SERVICE,
                tierId: PLATFORM_TIER,
                input: { simulate: "slow", delayMs: 2_000 }
              }),
            { concurrency: "unbounded" }
          )
          const held = yield* withinDailyLimit(buyer.agentId, 100 * PRICE, limit)
          expect(held.heldCents).toBe(limit)
          expect(started.filter((s) => s.status === "running")).toHaveLength(3)
          const refused = started.filter((s) => s.status === "compensated")
          expect(refused).toHaveLength(9)
          for (const s of refused) expect(s.failure?.reason).toContain("dailyLimit")
          // While the escrow is held, no other path may spend past the limit either: a 1-cent buy is refused.
          const buy = yield* Effect.flip(
            Effect.flatMap(Commerce, (c) =>
              c.buy({ caller: buyer.caller, serviceId: "svc_image_gen", tierId: "draft", input: null })
            )
          )
          expect(buy).toMatchObject({ _tag: "PolicyViolation", policy: "dailyLimit" })
          yield* TestClock.adjust(2_000)
          while ((yield* sagas.runDue()) > 0) yield* withinDailyLimit(buyer.agentId, 100 * PRICE, limit)
          const done = yield* Effect.forEach(started, (s) => sagas.get(buyer.agentId, s.id))
          expect(done.filter((s) => s.status === "completed")).toHaveLength(3)
          const after = yield* withinDailyLimit(buyer.agentId, 100 * PRICE, limit)
          expect(after).toMatchObject({ spentTodayCents: limit, heldCents: 0, remainingTodayCents: 0 })
          expect(yield* balance(buyer.agentId)).toBe(100 * PRICE - limit)
        })
    )

    it.effect(
      "an approval charges the price the owner saw; a price, tier or listing change voids it and charges nothing",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const catalog = yield* Catalog
          const seller = yield* platformSeller
          const service = yield* catalog.publish(
            seller.caller,
            body("Approval target", [tier("lite", 100), tier("pro", 300)], { mode: "simulated" })
          )
          const buyer = yield* agent(200_000)
          yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" })
          const ask = (tierId: string) =>
            commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId, input: { n: tierId } })

          const raised = yield* ask("lite")
          expect(raised).toMatchObject({ status: "pending_approval", approval: { quotedPriceCents: 100 } })
          yield* catalog.update(seller.caller, service.id, {
            tiers: [tier("lite", 90_000), tier("pro", 300)]
          } as unknown as UpdateServiceBody)
          const before = yield* balance(buyer.agentId)
          const refused = yield* Effect.flip(commerce.approve(ownerSession(buyer.accountId), raised.approval!.id))
          expect(refused).toMatchObject({ _tag: "Conflict", state: "void" })
          expect(refused.message).toContain("100 to 90000")
          expect(yield* balance(buyer.agentId)).toBe(before)
          // The void is kept: approving again is refused, and the owner's list shows it void.
          expect(
            yield* Effect.flip(commerce.approve(ownerSession(buyer.accountId), raised.approval!.id))
          ).toMatchObject({ _tag: "Conflict", state: "void" })
          const listed = yield* commerce.listApprovals(ownerSession(buyer.accountId), "void")
          expect(listed.data.map((a) => a.id)).toContain(raised.approval!.id)

          // A lower price is a change too: the owner approved a figure, not "whatever it costs".
          yield* catalog.update(seller.caller, service.id, {
            tiers: [tier("lite", 100), tier("pro", 300)]
          } as unknown as UpdateServiceBody)
          const lowered = yield* ask("pro")
          yield* catalog.update(seller.caller, service.id, {
            tiers: [tier("lite", 100), tier("pro", 250)]
          } as unknown as UpdateServiceBody)
          expect(
            yield* Effect.flip(commerce.approve(ownerSession(buyer.accountId), lowered.approval!.id))
          ).toMatchObject({ _tag: "Conflict", state: "void" })

          // The tier removed while the approval waited.
          const gone = yield* ask("pro")
          yield* catalog.update(seller.caller, service.id, {
            tiers: [tier("lite", 100)]
          } as unknown as UpdateServiceBody)
          expect(yield* Effect.flip(commerce.approve(ownerSession(buyer.accountId), gone.approval!.id))).toMatchObject({
            _tag: "Conflict",
            state: "void"
          })
          expect(yield* balance(buyer.agentId)).toBe(before)

          // The listing withdrawn while the approval waited (the seller delisted the service): void, nothing
          // charged, even once it is listed again at the same price (the owner approved a listing that went away).
          const delisted = yield* ask("lite")
          yield* catalog.update(seller.caller, service.id, { status: "inactive" } as unknown as UpdateServiceBody)
          const withdrawn = yield* Effect.flip(commerce.approve(ownerSession(buyer.accountId), delisted.approval!.id))
          expect(withdrawn).toMatchObject({ _tag: "Conflict", state: "void" })
          expect(withdrawn.message).toContain("no longer listed")
          expect(yield* balance(buyer.agentId)).toBe(before)
          yield* catalog.update(seller.caller, service.id, { status: "active" } as unknown as UpdateServiceBody)
          expect(
            yield* Effect.flip(commerce.approve(ownerSession(buyer.accountId), delisted.approval!.id))
          ).toMatchObject({ _tag: "Conflict", state: "void" })
          expect(
            (yield* commerce.listApprovals(ownerSession(buyer.accountId), "void")).data.map((a) => a.id)
          ).toContain(delisted.approval!.id)
          expect(yield* balance(buyer.agentId)).toBe(before)

          // Unchanged: charged exactly what was quoted.
          const kept = yield* ask("lite")
          const approved = yield* commerce.approve(ownerSession(buyer.accountId), kept.approval!.id)
          expect(approved.transaction).toMatchObject({ status: "completed", priceCents: 100 })
          expect(yield* balance(buyer.agentId)).toBe(before - 100)
        })
    )

    it.effect(
      "simulate acts only on the platform's sellers: on an agent's service the buyer cannot make the delivery fail",
      () =>
        Effect.gen(function* () {
          const commerce = yield* Commerce
          const sagas = yield* Sagas
          const seller = yield* agent(0)
          const service = yield* Effect.flatMap(Catalog, (c) =>
            c.publish(seller.caller, body("Real seller", [tier("unit", 50)]))
          )
          const buyer = yield* agent(10_000)
          // The seller decides the outcome: the buy waits for it, and its delivery completes the purchase.
          const orders = yield* Orders
          for (const simulate of ["fail", "timeout"]) {
            const bought = yield* commerce.buy({
              caller: buyer.caller,
              serviceId: service.id,
              tierId: "unit",
              input: { simulate }
            })
            expect(bought).toMatchObject({ status: "pending", transaction: { status: "pending", priceCents: 50 } })
            const delivered = yield* orders.deliver(seller.agentId, bought.transaction!.id, { output: { simulate } })
            expect(delivered).toMatchObject({ status: "delivered", output: { simulate } })
            const done = yield* commerce.getTransaction(buyer.agentId, bought.transaction!.id)
            expect(done).toMatchObject({
              status: "completed",
              priceCents: 50,
              delivery: { success: true, output: { simulate } }
            })
          }
          // A saga waits on the seller too (its deliver step is the seller's order), and the seller's delivery completes it.
          const saga = yield* sagas.start(buyer, { serviceId: service.id, tierId: "unit", input: { simulate: "fail" } })
          expect(saga).toMatchObject({ status: "running", currentStep: "deliver" })
          yield* orders.deliver(seller.agentId, saga.transactionId!, { output: { simulate: "fail" } })
          yield* sagas.runDue()
          expect(yield* sagas.get(buyer.agentId, saga.id)).toMatchObject({ status: "completed" })
          expect(yield* balance(seller.agentId)).toBe(3 * 42) // 50 cents → 42 to the seller, 8 fee
          // On a platform seller the switch still works (that seller is the platform's simulation).
          const failed = yield* commerce.buy({
            caller: buyer.caller,
            serviceId: "svc_image_gen",
            tierId: "draft",
            input: { simulate: "fail" }
          })
          expect(failed.transaction).toMatchObject({ status: "failed", priceCents: 1 })
        })
    )
  }
)

projectSuite("owner promises (invest, build)", (it) => {
  it.effect(
    "investing and building spend the wallet within the owner's per-transaction, daily and monthly limits",
    () =>
      Effect.gen(function* () {
        const invest = yield* Invest
        const builder = yield* Builder
        const wallet = yield* Wallet
        const o = yield* owner({ credits: 100_000 })
        yield* wallet.updatePolicy(
          o.agentId,
          { perTransactionLimitCents: cents(600), dailyLimitCents: cents(1_000) },
          { byOwner: true }
        )
        const balance = () => Effect.flatMap(Ledger, (l) => l.balance(walletAccount(o.agentId)))
        expect(yield* Effect.flip(invest.invest(o.agentId, { amountCents: 700 }))).toMatchObject({
          _tag: "PolicyViolation",
          policy: "perTransactionLimit"
        })
        yield* invest.invest(o.agentId, { amountCents: 600 })
        yield* invest.invest(o.agentId, { amountCents: 300 })
        expect(yield* wallet.view(o.agentId)).toMatchObject({ spentTodayCents: 900, remainingTodayCents: 100 })
        // 900 spent: a 100-cent build fits exactly, a second is over the day.
        expect(yield* balance()).toBe(100_000 - 900)
        const built = yield* builder.create(o.owner, { name: "Fits", templateId: "logo-forge" })
        expect(built.costCents).toBe(100)
        expect(yield* Effect.flip(invest.invest(o.agentId, { amountCents: 10 }))).toMatchObject({
          _tag: "PolicyViolation",
          policy: "dailyLimit"
        })
        expect(yield* balance()).toBe(100_000 - 1_000)
        // The next UTC day the window starts again; the month's limit still counts the first day.
        yield* wallet.updatePolicy(o.agentId, { monthlyLimitCents: cents(1_500) }, { byOwner: true })
        const now = yield* Clock.currentTimeMillis
        const nextDay = Math.floor(now / 86_400_000 + 1) * 86_400_000
        const sameMonth = new Date(now).getUTCMonth() === new Date(nextDay).getUTCMonth()
        yield* TestClock.adjust(nextDay - now)
        yield* invest.invest(o.agentId, { amountCents: 400 })
        const next = yield* Effect.flip(invest.invest(o.agentId, { amountCents: 200 }))
        expect(next).toMatchObject({ _tag: "PolicyViolation", policy: sameMonth ? "monthlyLimit" : "dailyLimit" })
      })
  )
})

// What the limits read costs the same whatever the buyer's history: the held escrow comes from its
// running sagas through the partial index, never a walk of every saga it ever ran.
forEachStorage(
  "owner promises (the held read on SQL)",
  (storage) => storage,
  (it) => {
    const steps = (escrow: string, settle: string) =>
      JSON.stringify(
        ["quote", "escrow", "deliver", "settle", "confirm"].map((name) => ({
          name,
          status: name === "quote" ? "succeeded" : name === "escrow" ? escrow : name === "settle" ? settle : "pending"
        }))
      )
    it.effect(
      "a buyer with 3,000 finished sagas and 3 running: the held read uses the running-sagas index and reads only those",
      () =>
        Effect.gen(function* () {
          const client = yield* Effect.serviceOption(SqlClient.SqlClient)
          expect(client._tag).toBe("Some")
          if (client._tag === "None") return
          const sql = client.value
          const buyer = `agt_held_${Math.random().toString(36).slice(2, 10)}`
          yield* sql`INSERT INTO sagas (id, buyer_agent_id, account_id, seller_agent_id, service_id, tier_id, price_cents, status, steps, created_at, updated_at, finished_at, next_run_at)
          SELECT ${buyer} || '_done_' || g, ${buyer}, 'acct_h', 'agt_s', 'svc_h', 't', 100, 'completed', ${steps("succeeded", "succeeded")}::jsonb, now(), now(), now(), NULL
          FROM generate_series(1, 3000) g`
          const running = (id: string, price: number, escrow: string, settle: string) =>
            sql`INSERT INTO sagas (id, buyer_agent_id, account_id, seller_agent_id, service_id, tier_id, price_cents, status, steps, created_at, updated_at, finished_at, next_run_at)
              VALUES (${`${buyer}_${id}`}, ${buyer}, 'acct_h', 'agt_s', 'svc_h', 't', ${price}, 'running', ${steps(escrow, settle)}::jsonb, now(), now(), NULL, now())`
          yield* running("held", 700, "succeeded", "pending") // holds 700
          yield* running("quoted", 900, "pending", "pending") // quoted, nothing held yet
          yield* running("settled", 500, "succeeded", "succeeded") // settled, waiting for confirm: spent, not held
          yield* sql`ANALYZE sagas`
          const [row] = yield* heldStatement(sql, buyer)
          expect(Number(row.total)).toBe(700)
          const plan = yield* explain(sql, heldStatement(sql, buyer))
          expect(plan.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "sagas")).toEqual([])
          const read = plan
            .filter((n) => n["Index Name"] === "sagas_running_buyer_idx")
            .reduce((s, n) => s + n["Actual Rows"] * n["Actual Loops"], 0)
          expect(read).toBeGreaterThan(0)
          expect(read).toBeLessThanOrEqual(3)
        })
    )
  },
  undefined,
  { only: ["embedded", "postgres"] }
)
