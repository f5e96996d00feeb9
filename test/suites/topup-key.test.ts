// A keyed top-up is credited once per key: the retry of a top-up whose first attempt committed but
// never answered (the database failed over between the commit and the reply, and the key's record
// lapsed) finds the credit instead of granting it again. On every storage.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { commerceStack, fundedBuyer } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

/** The request's Idempotency-Key and the caller it belongs to, as the top-up handler passes them. */
const keyed = (key: string, scope: string) => ({ key, scope })

forEachStorage("keyed top-ups", commerceStack, (it) => {
  it.effect(
    "the same key and caller: one credit, the same entry answered again; another key or caller, or no key: a credit each",
    () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const ledger = yield* Ledger
        const { agentId } = yield* fundedBuyer(0)
        const first = yield* wallet.topup(agentId, 300, keyed("k-1", "caller-a"))
        const again = yield* wallet.topup(agentId, 300, keyed("k-1", "caller-a"))
        expect(again.entryId, "the retry finds the first credit").toBe(first.entryId)
        expect(again.balanceCents).toBe(300)
        yield* wallet.topup(agentId, 300, keyed("k-2", "caller-a"))
        yield* wallet.topup(agentId, 300, keyed("k-1", "caller-b"))
        yield* wallet.topup(agentId, 300)
        yield* wallet.topup(agentId, 300)
        expect(yield* ledger.balance(walletAccount(agentId)), "five credits, not six").toBe(1500)
      })
  )
})
