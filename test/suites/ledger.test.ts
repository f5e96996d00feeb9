// Ledger suite, run on memory and Postgres: balanced entries, no negative wallets under
// concurrency, rollback on failure, and the 85/15 split that never creates or loses a cent.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Ids } from "../../src/services/platform/Db.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import {
  EXTERNAL_GRANTS,
  InsufficientFunds,
  PLATFORM_FEES,
  splitSettlement,
  walletAccount
} from "../../src/schema/ledger/ledger.js"
import { InvalidInput } from "../../src/schema/platform/errors.js"
import { forEachStorage } from "../fixtures/suite.js"
import { describe, it as vit } from "vitest"

describe("splitSettlement", () => {
  vit(
    "rounds the 15% fee to the nearest cent (halves up) and gives the seller the remainder, for every price up to 10 000",
    () => {
      for (let price = 0; price <= 10_000; price++) {
        const { sellerCents, feeCents } = splitSettlement(price)
        expect(sellerCents + feeCents).toBe(price)
        // Nearest cent: never more than half a cent from the exact 15 %.
        expect(Math.abs(feeCents * 100 - price * 15)).toBeLessThanOrEqual(50)
      }
      expect(splitSettlement(1)).toEqual({ sellerCents: 1, feeCents: 0 })
      expect(splitSettlement(3)).toEqual({ sellerCents: 3, feeCents: 0 })
      expect(splitSettlement(4)).toEqual({ sellerCents: 3, feeCents: 1 })
      expect(splitSettlement(7)).toEqual({ sellerCents: 6, feeCents: 1 })
      expect(splitSettlement(10)).toEqual({ sellerCents: 8, feeCents: 2 }) // 1.5 → 2 (half up)
      expect(splitSettlement(100)).toEqual({ sellerCents: 85, feeCents: 15 })
      expect(splitSettlement(777)).toEqual({ sellerCents: 660, feeCents: 117 })
      expect(splitSettlement(1999)).toEqual({ sellerCents: 1699, feeCents: 300 })
      expect(() => splitSettlement(1.5)).toThrow()
    }
  )
})

forEachStorage(
  "ledger",
  (storage) => Ledger.layer.pipe(Layer.provideMerge(storage), Layer.provideMerge(Ids.Live)),
  (it) => {
    it.effect("funding and transfers keep every balance equal to its postings", () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const a = walletAccount("agt_a1")
        const b = walletAccount("agt_b1")
        yield* ledger.transfer({ kind: "grant", reference: "t1", from: EXTERNAL_GRANTS, to: a, amount: 1000 })
        yield* ledger.post({
          kind: "purchase",
          reference: "t2",
          postings: [
            { account: a, amount: -100 },
            { account: b, amount: 85 },
            { account: PLATFORM_FEES, amount: 15 }
          ]
        })
        expect(yield* ledger.balance(a)).toBe(900)
        expect(yield* ledger.balance(b)).toBe(85)
        const history = yield* ledger.entriesFor(a, { limit: 10 })
        expect(history.map((e) => e.kind)).toEqual(["purchase", "grant"])
        expect((yield* ledger.entriesByReference("t2"))[0].postings).toHaveLength(3)
        const check = yield* ledger.check
        expect(check.totalCents).toBe(0)
        expect(check.mismatches).toEqual([])
        expect(check.ok).toBe(true)
      })
    )

    it.effect("refuses unbalanced entries and overdrafts without writing anything", () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const a = walletAccount("agt_a2")
        yield* ledger.transfer({ kind: "grant", reference: "g", from: EXTERNAL_GRANTS, to: a, amount: 50 })
        const unbalanced = yield* Effect.flip(
          ledger.post({
            kind: "adjustment",
            reference: "x",
            postings: [
              { account: a, amount: 5 },
              { account: PLATFORM_FEES, amount: 1 }
            ]
          })
        )
        expect(unbalanced).toBeInstanceOf(InvalidInput)
        const overdraft = yield* Effect.flip(
          ledger.transfer({ kind: "purchase", reference: "y", from: a, to: PLATFORM_FEES, amount: 51 })
        )
        expect(overdraft).toBeInstanceOf(InsufficientFunds)
        expect(overdraft).toMatchObject({ balanceCents: 50, requiredCents: 51, missingCents: 1 })
        expect(yield* ledger.balance(a)).toBe(50)
        expect(yield* ledger.entriesByReference("y")).toHaveLength(0)
        expect((yield* ledger.check).ok).toBe(true)
      })
    )

    it.effect(
      "1,000 concurrent debits against a wallet funded for exactly 100: 100 succeed, balance 0",
      () =>
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const buyer = walletAccount("agt_race")
          const seller = walletAccount("agt_seller_race")
          yield* ledger.transfer({
            kind: "grant",
            reference: "fund",
            from: EXTERNAL_GRANTS,
            to: buyer,
            amount: 100 * 20
          })
          const results = yield* Effect.forEach(
            Array.from({ length: 1000 }, (_, i) => i),
            (i) => {
              const { sellerCents, feeCents } = splitSettlement(20)
              return ledger
                .post({
                  kind: "purchase",
                  reference: `race-${i}`,
                  postings: [
                    { account: buyer, amount: -20 },
                    { account: seller, amount: sellerCents },
                    { account: PLATFORM_FEES, amount: feeCents }
                  ]
                })
                .pipe(Effect.result)
            },
            { concurrency: 50 }
          )
          const ok = results.filter((r) => r._tag === "Success").length
          const refused = results.filter((r) => r._tag === "Failure" && r.failure._tag === "InsufficientFunds").length
          expect(ok).toBe(100)
          expect(refused).toBe(900)
          expect(yield* ledger.balance(buyer)).toBe(0)
          expect(yield* ledger.balance(seller)).toBe(100 * 17)
          const check = yield* ledger.check
          expect(check.ok).toBe(true)
        }),
      { timeout: 60_000 }
    )
  }
)
