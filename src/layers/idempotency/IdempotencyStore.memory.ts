// In-memory idempotency records.
import { Effect, Layer } from "effect"
import { type BeginResult, IdempotencyStore, type StoredResponse } from "../../services/idempotency/IdempotencyStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

interface Row {
  readonly requestHash: string
  readonly state: "in_progress" | "done"
  readonly owner: string
  readonly leaseUntilMs: number
  readonly expiresAtMs: number
  readonly response?: StoredResponse
}

export const MemoryIdempotencyStore = Layer.effect(
  IdempotencyStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, Row>("idempotency_keys")
    const id = (scope: string, key: string) => `${scope}\u0000${key}`
    /** The row, while the attempt `owner` still holds it (in progress, not taken over). */
    const held = (scope: string, key: string, owner: string) => {
      const row = rows.get(id(scope, key))
      return row && row.state === "in_progress" && row.owner === owner ? row : undefined
    }
    return {
      begin: (i) =>
        Effect.suspend((): Effect.Effect<BeginResult> => {
          const existing = rows.get(id(i.scope, i.key))
          const reusable =
            !existing ||
            existing.expiresAtMs <= i.nowMs ||
            (existing.state === "in_progress" && existing.leaseUntilMs <= i.nowMs)
          if (reusable) {
            return Effect.as(
              rows.set(id(i.scope, i.key), {
                requestHash: i.requestHash,
                state: "in_progress",
                owner: i.owner,
                leaseUntilMs: i.leaseUntilMs,
                expiresAtMs: i.expiresAtMs
              }),
              { _tag: "Started" as const }
            )
          }
          return Effect.succeed(
            existing.state === "done"
              ? { _tag: "Done" as const, requestHash: existing.requestHash, response: existing.response! }
              : { _tag: "InProgress" as const, requestHash: existing.requestHash }
          )
        }),
      renew: (scope, key, owner, leaseUntilMs) =>
        Effect.suspend(() => {
          const row = held(scope, key, owner)
          return row ? rows.set(id(scope, key), { ...row, leaseUntilMs }) : Effect.void
        }),
      complete: (scope, key, owner, response) =>
        Effect.suspend(() => {
          const row = held(scope, key, owner)
          return row ? rows.set(id(scope, key), { ...row, state: "done", response }) : Effect.void
        }),
      release: (scope, key, owner) =>
        Effect.suspend(() => (held(scope, key, owner) ? rows.delete(id(scope, key)) : Effect.void))
    }
  })
)
