// Refusals: the debits the wallet refused, kept for the owner. A refusal is recorded after the
// refused unit of work rolled back, in a unit of work of its own, so the record survives the
// rollback; recording is bounded in time and never fails or delays the refusal the agent gets.
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { InvalidInput, type StorageUnavailable } from "../../schema/platform/errors.js"
import type { RefusalInput, RefusalReason, RefusalsPage, RefusalView } from "../../schema/refusals/refusals.js"
import { Ids, Transactor } from "../platform/Db.js"
import { RefusalsStore } from "./RefusalsStore.js"

/**
 * What a refused debit was, for `recordingRefusal`: the reason and the message come from the
 * error, and so does the price when the caller did not know it (null): the amount the error names.
 */
export type RefusalContext = Omit<RefusalInput, "reason" | "message" | "priceCents"> & {
  readonly priceCents: number | null
}

export interface RefusalsService {
  /**
   * Keeps the refusal, in its own unit of work (call it after the refused one rolled back). Never
   * fails: a storage failure or a slow write (over a second) is logged and given up, since the
   * agent's refusal must answer the same either way.
   */
  readonly record: (r: RefusalInput) => Effect.Effect<void>
  /**
   * The effect unchanged, except that a failure that is a wallet refusal (a policy, a freeze, the
   * balance: `refusalReasonOf`) is recorded before it is passed on. Wrap the whole unit of work.
   * A context given as an effect is read only on a refusal (and within the same time bound).
   */
  readonly recordingRefusal: (
    context: RefusalContext | (() => Effect.Effect<RefusalContext | undefined, unknown>)
  ) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Records `error` when it is a wallet refusal (else nothing), bounded and never failing: for a
   * path that answers the refusal without failing its unit of work (a saga that fails its step).
   */
  readonly recordError: (error: unknown, context: RefusalContext) => Effect.Effect<void>
  /** The account's refusals (one agent's when `agentId`), newest first, a keyset page (default and most: 100). */
  readonly list: (
    accountId: string,
    options: {
      readonly agentId?: string | undefined
      readonly cursor?: string | undefined
      readonly limit?: number | undefined
    }
  ) => Effect.Effect<RefusalsPage, InvalidInput | StorageUnavailable>
  /** Each of the account's agents' newest refusal (agents never refused are absent). */
  readonly latestByAgent: (accountId: string) => Effect.Effect<ReadonlyMap<string, RefusalView>, StorageUnavailable>
}

/**
 * The refusal reason of a wallet error, or null for any other failure. Reads the tagged errors by
 * shape so that this domain needs no import of the domains whose debits it records.
 */
export const refusalReasonOf = (e: unknown): RefusalReason | null => {
  if (typeof e !== "object" || e === null || !("_tag" in e)) return null
  if (e._tag === "InsufficientCredits" || e._tag === "InsufficientFunds") return "insufficient_balance"
  // A paid call or a credential-paid purchase answers a short wallet with a fresh challenge.
  if (e._tag === "PaymentRequired")
    return field(e, "problem") === "wallet-insufficient-funds" ? "insufficient_balance" : null
  if (e._tag !== "PolicyViolation" || !("policy" in e)) return null
  switch (e.policy) {
    case "frozen":
      return "frozen"
    case "perTransactionLimit":
      return "per_purchase_limit"
    case "dailyLimit":
      return "daily_limit"
    case "monthlyLimit":
      return "monthly_limit"
    case "allowedCategories":
      return "category"
    case "allowedSellers":
      return "seller_allowlist"
    default:
      return null
  }
}

const field = (e: unknown, name: string): unknown =>
  typeof e === "object" && e !== null && name in e ? (e as Record<string, unknown>)[name] : undefined

const messageOf = (e: unknown): string => {
  const m = field(e, "message")
  return typeof m === "string" ? m : ""
}

/** The amount a refusal names: a policy's attempted amount, a balance refusal's required one. */
const amountOf = (e: unknown): number | null => {
  for (const name of ["attemptedCents", "requiredCents", "amountCents"]) {
    const v = field(e, name)
    if (typeof v === "number" && Number.isInteger(v) && v >= 0) return v
  }
  return null
}

const make = Effect.gen(function* () {
  const store = yield* RefusalsStore
  const ids = yield* Ids
  const { atomically } = yield* Transactor

  const insert = Effect.fnUntraced(function* (r: RefusalInput) {
    const id = yield* ids.make("ref")
    const now = yield* Clock.currentTimeMillis
    yield* atomically(store.insert({ ...r, id, createdAt: new Date(now).toISOString() }))
  })

  const bounded = <E>(effect: Effect.Effect<void, E>): Effect.Effect<void> =>
    effect.pipe(
      Effect.timeout(Duration.seconds(1)),
      Effect.catchCause((cause) => Effect.logWarning("a refusal could not be recorded", cause))
    )

  const record = (r: RefusalInput): Effect.Effect<void> => bounded(insert(r))

  const recordError = (error: unknown, context: RefusalContext): Effect.Effect<void> => {
    const reason = refusalReasonOf(error)
    if (reason === null) return Effect.void
    const priceCents = context.priceCents ?? amountOf(error) ?? 0
    return record({ ...context, priceCents, reason, message: messageOf(error) })
  }

  const recordingRefusal =
    (context: RefusalContext | (() => Effect.Effect<RefusalContext | undefined, unknown>)) =>
    <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.tapError(effect, (e) => {
        const reason = refusalReasonOf(e)
        if (reason === null) return Effect.void
        const known = typeof context === "function" ? context() : Effect.succeed(context)
        return bounded(
          Effect.flatMap(known, (c) =>
            c === undefined
              ? Effect.void
              : insert({ ...c, priceCents: c.priceCents ?? amountOf(e) ?? 0, reason, message: messageOf(e) })
          )
        )
      })

  const list = Effect.fnUntraced(function* (
    accountId: string,
    options: {
      readonly agentId?: string | undefined
      readonly cursor?: string | undefined
      readonly limit?: number | undefined
    }
  ) {
    const limit = options.limit ?? 100
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
    }
    const rows = yield* store.page(accountId, { agentId: options.agentId, before, limit: limit + 1 })
    const refusals = rows.slice(0, limit)
    const last = refusals[refusals.length - 1]
    const page: RefusalsPage = { refusals, nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null }
    return page
  })

  const latestByAgent = (accountId: string) =>
    Effect.map(store.latestByAgent(accountId), (rows) => new Map(rows.map((r) => [r.agentId, r] as const)))

  return { record, recordError, recordingRefusal, list, latestByAgent } satisfies RefusalsService
})

export class Refusals extends Context.Service<Refusals, RefusalsService>()("agent-commerce/Refusals") {
  /** Only ports stay open: the store, the transactor and ids. */
  static readonly layer = Layer.effect(Refusals, make)
}
