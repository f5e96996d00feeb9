// Domain dedupe of a saga purchase and of a negotiation's proposal and moves, on every storage. The
// promise: a buyer whose keyed request committed but whose answer was lost (a failover between
// COMMIT and the reply, the idempotency record lost or left unfinished) retries with the same key
// and body and gets the first outcome — one saga charged once, one negotiation, one accept — and the
// same key with another body is refused 422.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { IdempotencyKeyReused } from "../../src/schema/platform/errors.js"
import { commerceServices } from "../../src/seed/services.js"
import { CommerceSeedLive } from "../../src/layers/seed/seedCommerce.js"
import { offersFrom } from "../../src/services/purchases/Offers.js"
import { Events } from "../../src/services/events/Events.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import type { Permission } from "../../src/schema/keys/keys.js"
import { unlimitedWallet } from "../fixtures/money.js"
import { NegotiationServicesLive } from "../fixtures/services.js"
import { forEachStorage } from "../fixtures/suite.js"

const SERVICE = "svc_doc_translate"
const TIER = "business" // 7900 cents

let n = 0
/** A fresh buyer, and the scope its Idempotency-Keys belong to (the suite's storage outlives each test). */
const newBuyer = () => {
  const agentId = `agt_dedupe_${++n}_${Math.random().toString(36).slice(2, 8)}`
  return {
    accountId: "acct_test",
    agentId,
    keyId: `key_${n}`,
    permissions: new Set<Permission>(["commerce:negotiate", "commerce:buy", "commerce:read"]),
    scope: `scope-${agentId}`
  }
}

forEachStorage(
  "domain dedupe: sagas and negotiations",
  (storage) =>
    NegotiationServicesLive.pipe(
      Layer.provideMerge(offersFrom(commerceServices)),
      Layer.provideMerge(Wallet.layer),
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, Events.layer, CommerceSeedLive)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    const fund = (agentId: string, amount: number) =>
      Effect.andThen(
        unlimitedWallet(agentId),
        Effect.flatMap(Ledger, (l) =>
          l.transfer({
            kind: "grant",
            reference: `fund-${agentId}`,
            from: EXTERNAL_GRANTS,
            to: walletAccount(agentId),
            amount
          })
        )
      )
    const balance = (agentId: string) => Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId)))

    it.effect("a saga retried with its key: the same saga, charged once; another key is another purchase", () =>
      Effect.gen(function* () {
        const sagas = yield* Sagas
        const b = newBuyer()
        yield* fund(b.agentId, 20_000)
        const body = { serviceId: SERVICE, tierId: TIER, input: { text: "once" } }
        const first = yield* sagas.start(b, body, { key: "saga-1", scope: b.scope })
        expect(first.status).toBe("completed")
        const retry = yield* sagas.start(b, body, { key: "saga-1", scope: b.scope })
        expect(retry.id, "the first saga").toBe(first.id)
        expect(retry.status).toBe("completed")
        expect(yield* balance(b.agentId), "charged once").toBe(20_000 - 7900)
        const refused = yield* Effect.flip(
          sagas.start(b, { ...body, input: { text: "other" } }, { key: "saga-1", scope: b.scope })
        )
        expect(refused).toBeInstanceOf(IdempotencyKeyReused)
        yield* sagas.start(b, body, { key: "saga-2", scope: b.scope })
        expect(yield* balance(b.agentId), "a second key, a second purchase").toBe(20_000 - 2 * 7900)
      })
    )

    it.effect("a proposal retried with its key: one negotiation, answered again as it stands", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const b = newBuyer()
        const body = { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 }
        const first = yield* negotiations.open(b, body, { key: "neg-1", scope: b.scope })
        const retry = yield* negotiations.open(b, body, { key: "neg-1", scope: b.scope })
        expect(retry).toEqual(first)
        const listed = yield* negotiations.list(b.agentId, {})
        expect(
          listed.data.map((x) => x.id),
          "one negotiation"
        ).toEqual([first.id])
        const refused = yield* Effect.flip(
          negotiations.open(b, { ...body, proposedPriceCents: 5100 }, { key: "neg-1", scope: b.scope })
        )
        expect(refused).toBeInstanceOf(IdempotencyKeyReused)
      })
    )

    it.effect("an accept retried with its key: the accepted negotiation again, not a 409 'closed'", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const b = newBuyer()
        const opened = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 })
        yield* TestClock.adjust(negotiations.delayMs)
        yield* negotiations.runDue()
        expect((yield* negotiations.get(b.agentId, opened.id)).status).toBe("awaiting_buyer")
        const first = yield* negotiations.respond(b, opened.id, { action: "accept" }, { key: "acc-1", scope: b.scope })
        expect(first.status).toBe("accepted")
        const retry = yield* negotiations.respond(b, opened.id, { action: "accept" }, { key: "acc-1", scope: b.scope })
        expect(retry).toEqual(first)
        // Without the key the second accept is what it is: the negotiation is no longer the buyer's turn.
        const closed = yield* Effect.flip(negotiations.respond(b, opened.id, { action: "accept" }))
        expect(closed._tag).toBe("NegotiationClosed")
        const refused = yield* Effect.flip(
          negotiations.respond(b, opened.id, { action: "reject" }, { key: "acc-1", scope: b.scope })
        )
        expect(refused).toBeInstanceOf(IdempotencyKeyReused)
      })
    )
  }
)
