// In-memory store of x402 payments: the rows, and the two unique names of a payment (payer and
// key; the authorization's nonce), as the Postgres unique indexes.
import { Effect, Layer } from "effect"
import type { PaymentRecord } from "../../schema/x402/x402.js"
import { X402Store } from "../../services/x402/X402Store.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const keyOf = (r: PaymentRecord) => `${r.payer}\u0000${r.paymentKey}`
const nonceOf = (r: PaymentRecord) =>
  `${r.network}\u0000${r.asset.toLowerCase()}\u0000${r.payer}\u0000${r.nonce.toLowerCase()}`

export const MemoryX402Store = Layer.effect(
  X402Store,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, PaymentRecord>("x402_payments")
    const byKey = db.table<string, string>("x402_payments_by_key")
    const byNonce = db.table<string, string>("x402_payments_by_nonce")
    const byId = (a: PaymentRecord, b: PaymentRecord) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    const sorted = () => [...rows.values()].sort(byId)
    return X402Store.of({
      claim: (r) =>
        Effect.suspend(
          (): Effect.Effect<
            { readonly _tag: "Claimed" } | { readonly _tag: "Exists"; readonly existing: PaymentRecord }
          > => {
            const id = byKey.get(keyOf(r)) ?? byNonce.get(nonceOf(r))
            const existing = id === undefined ? undefined : rows.get(id)
            if (existing !== undefined) return Effect.succeed({ _tag: "Exists" as const, existing })
            return Effect.as(
              Effect.all([rows.set(r.id, r), byKey.set(keyOf(r), r.id), byNonce.set(nonceOf(r), r.id)], {
                discard: true
              }),
              { _tag: "Claimed" as const }
            )
          }
        ),
      get: (id) => Effect.sync(() => rows.get(id)),
      byAuthorization: (network, asset, payer, nonce) =>
        Effect.sync(() => {
          const id = byNonce.get(`${network}\u0000${asset.toLowerCase()}\u0000${payer}\u0000${nonce.toLowerCase()}`)
          return id === undefined ? undefined : rows.get(id)
        }),
      getForUpdate: (id) => Effect.sync(() => rows.get(id)),
      update: (r) => rows.set(r.id, r),
      remove: (id) =>
        Effect.suspend(() => {
          const r = rows.get(id)
          if (r === undefined) return Effect.void
          return Effect.all([rows.delete(id), byKey.delete(keyOf(r)), byNonce.delete(nonceOf(r))], { discard: true })
        }),
      inStatus: (statuses, limit) =>
        Effect.sync(() =>
          [...rows.values()]
            .filter((r) => statuses.includes(r.status))
            .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || byId(a, b))
            .slice(0, limit)
        ),
      page: (afterId, limit) =>
        Effect.sync(() =>
          sorted()
            .filter((r) => afterId === null || r.id > afterId)
            .slice(0, limit)
        )
    })
  })
)
