// Domain dedupe of an investment and a project creation, on every storage. The promise: a client
// whose keyed write committed but whose answer was lost (a failover between COMMIT and the reply,
// the idempotency record lost or left unfinished) retries with the same key and body and gets the
// first outcome — one investment, one project, charged once; the same key with another body is
// refused 422; a write that failed leaves nothing behind, so its retry runs.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { IdempotencyKeyReused } from "../../src/schema/platform/errors.js"
import { Invest } from "../../src/services/invest/Invest.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Builder } from "../../src/services/projects/Builder.js"
import { BuildStore } from "../../src/services/projects/BuildStore.js"
import { owner, projectSuite } from "../fixtures/projects.js"

/**
 * The request's key and the caller it belongs to, as the handlers pass them (`requestIdempotency`);
 * a fresh caller per test, as the suite's storage outlives each test.
 */
let callers = 0
const caller = () => `caller-${++callers}-${Math.random().toString(36).slice(2, 8)}`

projectSuite("domain dedupe: investments and projects", (it) => {
  it.effect("an investment retried with its key: the same investment, tokens and credits moved once", () =>
    Effect.gen(function* () {
      const me = caller()
      const other = caller()
      const invest = yield* Invest
      const ledger = yield* Ledger
      const { agentId } = yield* owner({ credits: 10_000 })
      const first = yield* invest.invest(agentId, { tokens: 100 }, { key: "inv-1", scope: me })
      const retry = yield* invest.invest(agentId, { tokens: 100 }, { key: "inv-1", scope: me })
      expect(retry.investment, "the first investment, answered again").toEqual(first.investment)
      expect(retry.holding.tokens, "held once").toBe(100)
      expect(yield* ledger.balance(walletAccount(agentId)), "charged once").toBe(10_000 - 100 * 10)
      // Another key, or the same key of another caller, is another investment.
      yield* invest.invest(agentId, { tokens: 100 }, { key: "inv-2", scope: me })
      yield* invest.invest(agentId, { tokens: 100 }, { key: "inv-1", scope: other })
      expect(yield* ledger.balance(walletAccount(agentId))).toBe(10_000 - 300 * 10)
    })
  )

  it.effect("the same key with another body: 422 IdempotencyKeyReused, nothing charged", () =>
    Effect.gen(function* () {
      const me = caller()
      const invest = yield* Invest
      const ledger = yield* Ledger
      const { agentId } = yield* owner({ credits: 10_000 })
      yield* invest.invest(agentId, { tokens: 100 }, { key: "inv-1", scope: me })
      const refused = yield* Effect.flip(invest.invest(agentId, { tokens: 200 }, { key: "inv-1", scope: me }))
      expect(refused).toBeInstanceOf(IdempotencyKeyReused)
      expect(yield* ledger.balance(walletAccount(agentId))).toBe(10_000 - 100 * 10)
    })
  )

  it.effect("a refused investment leaves no trace of its key: the retry runs", () =>
    Effect.gen(function* () {
      const me = caller()
      const invest = yield* Invest
      const ledger = yield* Ledger
      const { agentId } = yield* owner({ credits: 500 })
      const refused = yield* Effect.flip(invest.invest(agentId, { tokens: 100 }, { key: "inv-1", scope: me }))
      expect(refused._tag).toBe("InsufficientFunds")
      // Funded since, the same request with the same key is served.
      yield* ledger.transfer({
        kind: "grant",
        reference: `more-${agentId}`,
        from: EXTERNAL_GRANTS,
        to: walletAccount(agentId),
        amount: 1_000
      })
      const served = yield* invest.invest(agentId, { tokens: 100 }, { key: "inv-1", scope: me })
      expect(served.investment.tokens).toBe(100)
    })
  )

  it.effect("a project creation retried with its key: one project, charged once, the same project answered", () =>
    Effect.gen(function* () {
      const me = caller()
      const builder = yield* Builder
      const ledger = yield* Ledger
      const store = yield* BuildStore
      const who = yield* owner({ plan: "pro", credits: 10_000 })
      const body = { name: "Retry-safe", description: "a project created once whatever the retries" }
      const first = yield* builder.create(who.owner, body, { key: "prj-1", scope: me })
      const after = yield* ledger.balance(walletAccount(who.agentId))
      const retry = yield* builder.create(who.owner, body, { key: "prj-1", scope: me })
      expect(retry.id, "the first project").toBe(first.id)
      expect(retry.name).toBe(first.name)
      expect(yield* ledger.balance(walletAccount(who.agentId)), "charged once").toBe(after)
      expect(yield* store.countActive(who.accountId), "one project").toBe(1)
      const refused = yield* Effect.flip(
        builder.create(who.owner, { ...body, name: "Other" }, { key: "prj-1", scope: me })
      )
      expect(refused).toBeInstanceOf(IdempotencyKeyReused)
      expect(yield* store.countActive(who.accountId)).toBe(1)
    })
  )
})
