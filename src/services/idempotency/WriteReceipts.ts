// Domain dedupe for keyed writes that have no natural key of their own (a saga, an investment, a
// project build, a negotiation's moves, the owner's writes): the write and a receipt of what it
// made commit in one unit of work, so a retry whose idempotency record was lost or left unfinished
// (the reply to COMMIT was lost in a failover) finds the receipt and answers what committed instead
// of writing again. The rules: docs/idempotency.md "Domain dedupe".
import { createHash } from "node:crypto"
import { Clock, Context, Data, Effect, Layer } from "effect"
import { IdempotencyKeyReused, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Transactor } from "../platform/Db.js"
import { WriteReceiptStore } from "./WriteReceiptStore.js"

/** The request's Idempotency-Key and whom it belongs to, as the handlers read them; no key, no dedupe. */
export interface KeyedRequest {
  readonly key: string | undefined
  readonly scope: string
}

export interface OnceInput<A, E, R, E2, R2> {
  readonly keyed: KeyedRequest | undefined
  /** Names the write; part of the fingerprint, so one key cannot stand for two kinds of write. */
  readonly kind: string
  /** What makes two requests the same: the decoded input and the target (ids from the path). */
  readonly request: unknown
  /** The write; it runs inside the receipt's unit of work (its own `atomically` joins it). */
  readonly write: Effect.Effect<A, E, R>
  /** The id the receipt keeps of what the write made. */
  readonly idOf: (a: A) => string
  /** The answer to a retry whose first attempt committed: what that id names now. */
  readonly replay: (resultId: string) => Effect.Effect<A, E2, R2>
}

export interface WriteReceiptsService {
  /** Runs `write` at most once per (scope, key); a retry is answered by `replay`. */
  readonly once: <A, E, R, E2, R2>(
    input: OnceInput<A, E, R, E2, R2>
  ) => Effect.Effect<A, E | E2 | IdempotencyKeyReused | StorageUnavailable, R | R2>
}

/** Internal: another attempt with the same key committed its receipt while this one ran. */
class Raced extends Data.TaggedError("Raced") {}

/** JSON with object keys sorted at every level: the same input in another key order is the same request. */
const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`
  }
  return JSON.stringify(value ?? null)
}

const fingerprintOf = (kind: string, request: unknown) =>
  createHash("sha256").update(canonicalJson({ kind, request })).digest("base64url")

const reused = (kind: string) =>
  new IdempotencyKeyReused({
    message: `this Idempotency-Key was already used for a different request (${kind}); use a new key for a new request`
  })

const make = Effect.gen(function* () {
  const store = yield* WriteReceiptStore
  const { atomically } = yield* Transactor

  const once = <A, E, R, E2, R2>(input: OnceInput<A, E, R, E2, R2>) => {
    const { keyed, kind } = input
    if (keyed?.key === undefined) return input.write
    const scope = keyed.scope
    const key = keyed.key
    const fingerprint = fingerprintOf(kind, input.request)
    /** The receipt's answer: the same request is replayed, another one refused. */
    const answer = (found: { readonly kind: string; readonly fingerprint: string; readonly resultId: string }) =>
      found.kind === kind && found.fingerprint === fingerprint
        ? Effect.succeed({ replay: found.resultId } as const)
        : Effect.fail(reused(found.kind))
    const attempt = atomically(
      Effect.gen(function* () {
        const found = yield* store.get(scope, key)
        if (found) return yield* answer(found)
        const value = yield* input.write
        const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        const stored = yield* store.insert({ scope, key, kind, fingerprint, resultId: input.idOf(value), createdAt })
        // Rolls this attempt back: the one that committed first is the outcome.
        if (!stored) return yield* Effect.fail(new Raced())
        return { value } as const
      })
    ).pipe(
      Effect.catchTag("Raced", () =>
        Effect.flatMap(store.get(scope, key), (found) =>
          found ? answer(found) : Effect.die(new Error(`write receipt ${kind} vanished after a conflict`))
        )
      )
    )
    return Effect.flatMap(attempt, (r) => ("value" in r ? Effect.succeed(r.value) : input.replay(r.replay)))
  }

  return WriteReceipts.of({ once })
})

export class WriteReceipts extends Context.Service<WriteReceipts, WriteReceiptsService>()(
  "agent-commerce/WriteReceipts"
) {
  static readonly layer = Layer.effect(WriteReceipts, make)
}
