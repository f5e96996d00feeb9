// What a client retrying with one Idempotency-Key is promised by the records behind it
// (docs/idempotency.md), on every storage: the attempt that holds a key is the only one that answers
// it. An attempt whose lease ran out and was taken over by a retry can no longer write its answer,
// extend its lease or forget the key: the retry's answer is the one replayed, whatever the first
// attempt does late. And an attempt that still holds its key does all three.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { IdempotencyStore, type StoredResponse } from "../../src/services/idempotency/IdempotencyStore.js"
import { forEachStorage } from "../fixtures/suite.js"

const T0 = Date.parse("2026-12-02T10:00:00.000Z")
const answer = (status: number, body: string): StoredResponse => ({ status, headers: {}, body })

forEachStorage(
  "idempotency records",
  (storage) => storage,
  (it) => {
    const fresh = () => ({
      scope: `agt_${Math.random().toString(36).slice(2, 10)}`,
      key: "retry-me",
      requestHash: "h1"
    })
    const begin = (k: ReturnType<typeof fresh>, owner: string, nowMs: number) =>
      Effect.flatMap(IdempotencyStore, (s) =>
        s.begin({ ...k, owner, nowMs, leaseUntilMs: nowMs + 10_000, expiresAtMs: nowMs + 86_400_000 })
      )

    it.effect("a first attempt taken over after its lease cannot answer, renew or release the retry's key", () =>
      Effect.gen(function* () {
        const store = yield* IdempotencyStore
        const k = fresh()
        expect(yield* begin(k, "first", T0)).toEqual({ _tag: "Started" })
        // Within the lease a retry waits for the first…
        expect(yield* begin(k, "retry", T0 + 5_000)).toMatchObject({ _tag: "InProgress" })
        // …past it, the retry takes the key over.
        expect(yield* begin(k, "retry", T0 + 10_000)).toEqual({ _tag: "Started" })
        // The first attempt, late: none of its writes touch the retry's record.
        yield* store.renew(k.scope, k.key, "first", T0 + 60_000)
        yield* store.complete(k.scope, k.key, "first", answer(201, "first's"))
        yield* store.release(k.scope, k.key, "first")
        // Still the retry's, in progress (not released, not answered by the first; its lease not extended).
        expect(yield* begin(k, "third", T0 + 15_000)).toMatchObject({ _tag: "InProgress" })
        yield* store.complete(k.scope, k.key, "retry", answer(201, "retry's"))
        expect(yield* begin(k, "third", T0 + 16_000)).toEqual({
          _tag: "Done",
          requestHash: "h1",
          response: answer(201, "retry's")
        })
      })
    )

    it.effect("an attempt that holds its key extends its lease, and may forget it so the client can retry", () =>
      Effect.gen(function* () {
        const store = yield* IdempotencyStore
        const k = fresh()
        expect(yield* begin(k, "first", T0)).toEqual({ _tag: "Started" })
        yield* store.renew(k.scope, k.key, "first", T0 + 30_000)
        // Past the first lease but within the renewed one: still the first's.
        expect(yield* begin(k, "retry", T0 + 20_000)).toMatchObject({ _tag: "InProgress" })
        yield* store.release(k.scope, k.key, "first")
        expect(yield* begin(k, "retry", T0 + 21_000)).toEqual({ _tag: "Started" })
      })
    )
  }
)
