// What the owner's overview promises, on every storage: each agent's figures are the ones its wallet
// page shows (balance, spend today and this month, held escrow, remaining, limits, pending approvals),
// with its newest refusal; and the overview costs the same few statements for one agent or fifty.
import { expect } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as Statement from "effect/sql/Statement"
import { TestClock } from "effect/testing"
import { UpdateWalletBody } from "../../src/schema/commerce/wallets.js"
import { Overview } from "../../src/services/audit/Overview.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Refusals } from "../../src/services/refusals/Refusals.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { agentCaller, commerceStack, sellerWith, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const setPolicy = (agentId: string, fields: Record<string, unknown>) =>
  Effect.flatMap(Wallet, (w) =>
    w.updatePolicy(agentId, Schema.decodeUnknownSync(UpdateWalletBody)(fields), { byOwner: true })
  )

/** A new account with `n` agents (registered as the dashboard makes them). */
const accountWith = (n: number) =>
  Effect.gen(function* () {
    const keys = yield* Keys
    const ids = yield* Ids
    const account = yield* keys.signUp({
      email: `${yield* ids.make("o")}@example.com`.toLowerCase(),
      password: "correct horse battery",
      name: "Owner"
    })
    const agents: Array<string> = []
    for (let i = 0; i < n; i++) agents.push((yield* keys.createAgent(account.id, { name: `agent ${i}` })).id)
    return { accountId: account.id, agents }
  })

const fund = (agentId: string, amount: number) =>
  Effect.flatMap(Ledger, (l) =>
    l.transfer({
      kind: "grant",
      reference: `fund-${agentId}`,
      from: EXTERNAL_GRANTS,
      to: walletAccount(agentId),
      amount
    })
  )

/** How many SQL statements `effect` runs (0 on the memory storage, which runs none). */
const countStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    let n = 0
    const result = yield* effect.pipe(
      Effect.provideService(Statement.CurrentTransformer, (self) => {
        n++
        return Effect.succeed(self)
      })
    )
    return { result, statements: n }
  })

forEachStorage(
  "owner's overview",
  (storage) => Layer.mergeAll(Overview.layer, Refusals.layer).pipe(Layer.provideMerge(commerceStack(storage))),
  (it, c) => {
    it.effect("each agent's figures equal its wallet view, with its newest refusal", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
        const commerce = yield* Commerce
        const refusals = yield* Refusals
        const { accountId, agents } = yield* accountWith(4)
        const [spender, waiting, limited, untouched] = agents
        const seller = yield* sellerWith("overview seller", [tier("small", 300), tier("big", 2_500)])
        const buy = (agentId: string, tierId: string, n: number) =>
          commerce.buy({ caller: agentCaller(agentId, accountId), serviceId: seller.service.id, tierId, input: { n } })

        yield* fund(spender, 10_000)
        yield* setPolicy(spender, {
          autonomyLevel: "full_auto",
          approvalThresholdCents: 100_000,
          perTransactionLimitCents: null,
          dailyLimitCents: 5_000,
          monthlyLimitCents: null
        })
        yield* buy(spender, "small", 1)
        yield* buy(spender, "big", 2)
        yield* fund(waiting, 1_000)
        yield* setPolicy(waiting, { autonomyLevel: "manual" })
        yield* buy(waiting, "small", 3)
        yield* buy(waiting, "small", 4)
        yield* setPolicy(limited, { perTransactionLimitCents: 200, monthlyLimitCents: 9_000, frozen: true })
        const refusal = (agentId: string, priceCents: number) =>
          refusals.record({
            agentId,
            serviceId: seller.service.id,
            serviceName: "overview seller",
            tierId: "big",
            priceCents,
            reason: "per_purchase_limit",
            message: "over the per-purchase limit",
            path: "buy"
          })
        yield* refusal(limited, 2_500)
        yield* TestClock.adjust(1_000)
        yield* refusal(limited, 2_600)

        const overview = yield* Effect.flatMap(Overview, (o) => o.overview(accountId))
        expect(overview.agents.map((a) => a.id).sort()).toEqual([...agents].sort())
        for (const row of overview.agents) {
          const view = yield* Effect.flatMap(Wallet, (w) => w.view(row.id))
          expect(row).toMatchObject({
            balanceCents: view.balanceCents,
            spentTodayCents: view.spentTodayCents,
            spentThisMonthCents: view.spentThisMonthCents,
            heldCents: view.heldCents,
            remainingTodayCents: view.remainingTodayCents,
            limits: {
              perPurchaseCents: view.policies.perTransactionLimitCents,
              dailyCents: view.policies.dailyLimitCents,
              monthlyCents: view.policies.monthlyLimitCents
            },
            autonomyLevel: view.autonomyLevel,
            approvalThresholdCents: view.policies.approvalThresholdCents,
            frozen: view.policies.frozen,
            pendingApprovals: view.pendingApprovals
          })
        }
        const byId = new Map(overview.agents.map((a) => [a.id, a]))
        // The figures are not all zeros: the promise above compares something.
        expect(byId.get(spender)).toMatchObject({
          balanceCents: 7_200,
          spentTodayCents: 2_800,
          remainingTodayCents: 2_200
        })
        expect(byId.get(waiting)?.pendingApprovals).toBe(2)
        expect(overview.pendingApprovals).toBe(2)
        expect(byId.get(limited)).toMatchObject({
          frozen: true,
          lastRefusal: { priceCents: 2_600, reason: "per_purchase_limit" }
        })
        expect(byId.get(untouched)).toMatchObject({ balanceCents: 0, lastRefusal: null, frozen: false })
      })
    )

    it.effect("an order waiting for its seller is held money in the overview, as in the wallet view", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T09:00:00.000Z"))
        const sellerAccount = yield* accountWith(1)
        const service = yield* Effect.flatMap(Catalog, (c) =>
          c.publish(
            agentCaller(sellerAccount.agents[0]!, sellerAccount.accountId),
            serviceBody("overview pull seller", [tier("small", 300)], "testing", { mode: "pull" })
          )
        )
        const { accountId, agents } = yield* accountWith(1)
        const buyer = agents[0]!
        yield* fund(buyer, 1_000)
        yield* setPolicy(buyer, { autonomyLevel: "full_auto", approvalThresholdCents: 100_000, dailyLimitCents: 5_000 })
        const bought = yield* Effect.flatMap(Commerce, (c) =>
          c.buy({ caller: agentCaller(buyer, accountId), serviceId: service.id, tierId: "small", input: null })
        )
        expect(bought.status).toBe("pending")
        const [row] = (yield* Effect.flatMap(Overview, (o) => o.overview(accountId))).agents
        const view = yield* Effect.flatMap(Wallet, (w) => w.view(buyer))
        expect(view.heldCents).toBe(300)
        expect(row).toMatchObject({
          heldCents: 300,
          balanceCents: view.balanceCents,
          remainingTodayCents: view.remainingTodayCents
        })
      })
    )

    it.effect("an account without agents has an empty overview; another account's agents are not in it", () =>
      Effect.gen(function* () {
        const empty = yield* accountWith(0)
        const other = yield* accountWith(2)
        expect(yield* Effect.flatMap(Overview, (o) => o.overview(empty.accountId))).toMatchObject({
          agents: [],
          pendingApprovals: 0
        })
        const mine = yield* Effect.flatMap(Overview, (o) => o.overview(other.accountId))
        expect(mine.agents.map((a) => a.id).sort()).toEqual([...other.agents].sort())
      })
    )

    it.effect("the overview runs as many statements for fifty agents as for one", () =>
      Effect.gen(function* () {
        const one = yield* accountWith(1)
        const fifty = yield* accountWith(50)
        for (const agentId of fifty.agents.slice(0, 10)) yield* fund(agentId, 100)
        const overview = yield* Overview
        const small = yield* countStatements(overview.overview(one.accountId))
        const large = yield* countStatements(overview.overview(fifty.accountId))
        expect(large.result.agents).toHaveLength(50)
        expect(large.result.agents.filter((a) => a.balanceCents === 100)).toHaveLength(10)
        expect(large.statements).toBe(small.statements)
        expect(small.statements > 0 || c.name === "memory").toBe(true)
        expect(small.statements).toBeLessThanOrEqual(3)
      })
    )
  }
)
