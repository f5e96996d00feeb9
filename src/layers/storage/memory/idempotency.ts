// In-memory idempotency records.
import { Effect, Layer } from "effect"
import { type BeginResult, IdempotencyStore, type StoredResponse } from "../../../services/Idempotency.js"
import { MemoryDb } from "./MemoryDb.js"

interface Row {
  readonly requestHash: string
  readonly state: "in_progress" | "done"
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
    return {
      begin: (i) =>
        Effect.suspend((): Effect.Effect<BeginResult> => {
          const existing = rows.get(id(i.scope, i.key))
          const reusable =
            !existing || existing.expiresAtMs <= i.nowMs || (existing.state === "in_progress" && existing.leaseUntilMs <= i.nowMs)
          if (reusable) {
            return Effect.as(
              rows.set(id(i.scope, i.key), { requestHash: i.requestHash, state: "in_progress", leaseUntilMs: i.leaseUntilMs, expiresAtMs: i.expiresAtMs }),
              { _tag: "Started" as const }
            )
          }
          return Effect.succeed(
            existing.state === "done"
              ? { _tag: "Done" as const, requestHash: existing.requestHash, response: existing.response! }
              : { _tag: "InProgress" as const, requestHash: existing.requestHash }
          )
        }),
      complete: (scope, key, response) =>
        Effect.suspend(() => {
          const row = rows.get(id(scope, key))
          return row ? rows.set(id(scope, key), { ...row, state: "done", response }) : Effect.void
        }),
      release: (scope, key) => rows.delete(id(scope, key))
    }
  })
)
