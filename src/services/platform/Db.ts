// Storage ports shared by every domain: "do this atomically", ids and randomness.
import { Context, Effect, Layer } from "effect"
import { randomBytes, randomFillSync, randomUUID } from "node:crypto"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

/**
 * Runs an effect as one unit of work. Postgres: a transaction (a nested call joins the open one,
 * no savepoint). Memory: a process-wide write lock with an undo journal, so a typed failure rolls
 * every write back. Row locks (`SELECT … FOR UPDATE`) are the stores' business.
 */
export interface TransactorService {
  readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageUnavailable, R>
}

export class Transactor extends Context.Service<Transactor, TransactorService>()("agent-commerce/Transactor") {}

/** Ids and secrets. A port so tests can make them predictable. */
export interface IdsService {
  /** `prefix_` + 20 url-safe random characters. */
  readonly make: (prefix: string) => Effect.Effect<string>
  readonly uuid: Effect.Effect<string>
  /** `bytes` random bytes, base64url. */
  readonly secret: (bytes: number) => Effect.Effect<string>
}

export class Ids extends Context.Service<Ids, IdsService>()("agent-commerce/Ids") {
  /**
   * Random bytes for ids come from a pool refilled a block at a time: one `randomFillSync` for many
   * ids instead of one per id (a purchase makes several, and the call showed in its profile). Still
   * the system CSPRNG; secrets are drawn directly.
   */
  static readonly Live = Layer.sync(Ids, () => {
    const pool = Buffer.alloc(4096)
    let offset = pool.length
    const random = (bytes: number): Buffer => {
      if (offset + bytes > pool.length) {
        randomFillSync(pool)
        offset = 0
      }
      const out = Buffer.from(pool.subarray(offset, offset + bytes))
      offset += bytes
      return out
    }
    return {
      make: (prefix) => Effect.sync(() => `${prefix}_${random(15).toString("base64url")}`),
      uuid: Effect.sync(() => randomUUID()),
      secret: (bytes) => Effect.sync(() => randomBytes(bytes).toString("base64url"))
    }
  })
}
