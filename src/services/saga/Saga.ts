// Saga: the five-step purchase (quote → escrow → deliver → settle → confirm) as a durable state
// table. Every step transition is committed with its ledger effect and events in one unit of
// work; a failure before settle compensates in that same unit (escrow released, negotiated price
// given back); confirm records the purchase in the commerce history; a worker resumes sagas
// whose driver died (lease expired) or whose timer is due.
import { Clock, Context, Effect, Layer } from "effect"
import {
  type IdempotencyKeyReused,
  InvalidInput,
  type NotFound,
  type StorageUnavailable
} from "../../schema/platform/errors.js"
import { type Saga, type SagaBody, type SagaRecord, sagaSteps } from "../../schema/saga/saga.js"
import { Settlement } from "../purchases/Settlement.js"
import { Offers } from "../purchases/Offers.js"
import { Events } from "../events/Events.js"
import type { Caller } from "../keys/Caller.js"
import { Ledger } from "../ledger/Ledger.js"
import { Ids, Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import { Wallet } from "../wallet/Wallet.js"
import { SagaStore } from "./SagaStore.js"
import { type Advanced, iso, notFound, SAGA_BATCH, SAGA_LEASE_MS, SAGA_PAGE_MAX, toSaga } from "./policy.js"
import { decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { Refusals } from "../refusals/Refusals.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import { SagaSteps } from "./steps.js"
import { KeysStore } from "../keys/KeysStore.js"
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import { sameAccountRefusal } from "../purchases/Purchases.js"
import { Orders } from "../purchases/Orders.js"

export interface SagasService {
  /** Starts a saga for the caller's purchase and drives it until it ends or waits on a timer. */
  readonly start: (
    caller: Pick<Caller, "agentId" | "accountId">,
    body: SagaBody,
    keyed?: KeyedRequest
  ) => Effect.Effect<Saga, NotFound | InvalidInput | IdempotencyKeyReused | StorageUnavailable>
  /** Locks the saga and runs one step in its own unit of work. */
  readonly advance: (id: string) => Effect.Effect<Advanced, NotFound | StorageUnavailable>
  /** Steps the saga until it ends or waits on a timer (each step its own unit of work). */
  readonly drive: (id: string) => Effect.Effect<SagaRecord, NotFound | StorageUnavailable>
  /**
   * Takes over due sagas (a dead driver's lease ran out, or a deliver timer fired) and drives
   * each until it ends or waits again; returns how many were claimed.
   */
  readonly runDue: (limit?: number) => Effect.Effect<number, StorageUnavailable>
  readonly get: (agentId: string, id: string) => Effect.Effect<Saga, NotFound | StorageUnavailable>
  /**
   * The agent's own sagas, newest first, a keyset page (default and most: 100): what A2A's ListTasks
   * lists among its tasks. `cursor` a page's `nextCursor`; another string is InvalidInput.
   */
  readonly list: (
    agentId: string,
    options?: { readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<
    { readonly data: Array<Saga>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  /** Which of the agent's transactions `transactionIds` are its sagas' purchases: transaction id → saga id. */
  readonly sagasOfTransactions: (
    agentId: string,
    transactionIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, string>, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* SagaStore
  const offers = yield* Offers
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const { step } = yield* SagaSteps
  const refusals = yield* Refusals
  const receipts = yield* WriteReceipts
  const orders = yield* Orders
  const keys = yield* KeysStore

  const advance = Effect.fnUntraced(
    function* (id: string) {
      const r = yield* store.getForUpdate(id)
      if (!r) return yield* Effect.fail(notFound(id))
      const advanced: Advanced = yield* step(r)
      return advanced
    },
    atomically,
    traced("Sagas.advance")
  )

  const drive = Effect.fnUntraced(function* (id: string) {
    let expiries = 0
    for (;;) {
      const { record, moved, refusal, placed, expire } = yield* advance(id)
      // The order decides the deliver step; overdue, it is expired first (which wakes this saga).
      if (expire !== undefined && expiries++ < 3) {
        yield* orders.expire(expire)
        continue
      }
      // The seller's order is committed: this process's waiting order lists and push dispatcher hear of it now.
      if (placed !== undefined) yield* orders.announce(placed)
      // The step's unit of work committed the saga's failure; the refusal is kept in its own.
      if (refusal !== undefined) {
        yield* refusals.recordError(refusal, {
          agentId: record.buyerAgentId,
          serviceId: record.serviceId,
          serviceName: record.snapshot?.serviceName ?? null,
          tierId: record.tierId,
          priceCents: record.priceCents,
          path: "saga"
        })
      }
      if (!moved || record.status !== "running") return record
    }
  })

  const start = Effect.fnUntraced(function* (
    caller: Pick<Caller, "agentId" | "accountId">,
    body: SagaBody,
    keyed?: KeyedRequest
  ) {
    const buyer = caller.agentId!
    const offer = yield* offers.get(body.serviceId, body.tierId)
    if (offer.service.sellerAgentId === buyer) {
      return yield* Effect.fail(
        new InvalidInput({ message: "you sell this service; an agent cannot buy from itself", field: "serviceId" })
      )
    }
    const sellerAccount = (yield* keys.getAgent(offer.service.sellerAgentId))?.accountId
    if (sellerAccount === caller.accountId && sellerAccount !== PLATFORM_SELLERS_ACCOUNT) {
      return yield* new InvalidInput({ message: sameAccountRefusal, field: "serviceId" })
    }
    const insert = atomically(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const at = iso(now)
        const r: SagaRecord = {
          id: yield* ids.make("saga"),
          buyerAgentId: buyer,
          accountId: caller.accountId,
          sellerAgentId: offer.service.sellerAgentId,
          serviceId: offer.service.id,
          tierId: offer.tier.id,
          input: body.input ?? null,
          negotiationId: body.negotiationId ?? null,
          priceCents: null,
          snapshot: null,
          transactionId: null,
          status: "running",
          steps: sagaSteps.map((name) => ({
            name,
            status: "pending" as const,
            startedAt: null,
            finishedAt: null,
            compensatedAt: null,
            detail: null
          })),
          failure: null,
          output: null,
          nextRunAt: iso(now + SAGA_LEASE_MS),
          deliverDueAt: null,
          createdAt: at,
          updatedAt: at,
          finishedAt: null
        }
        yield* store.insert(r)
        return r.id
      })
    )
    // A retry of a saga that committed drives the same saga (to its end, if its first driver died).
    const id = yield* receipts.once({
      keyed,
      kind: "saga.start",
      request: { buyer, body },
      write: insert,
      idOf: (id) => id,
      replay: Effect.succeed
    })
    return toSaga(yield* drive(id))
  }, traced("Sagas.start"))

  const runDue = Effect.fnUntraced(function* (limit: number = SAGA_BATCH) {
    const now = yield* Clock.currentTimeMillis
    const claimed = yield* atomically(store.claimDue(iso(now), iso(now + SAGA_LEASE_MS), limit))
    // One saga that cannot move (storage hiccup, a bug) must not hold up the others: it is
    // logged and taken over again when its lease runs out.
    for (const id of claimed) {
      yield* drive(id).pipe(
        Effect.catchCause((cause) => Effect.logWarning(`saga ${id}: a step failed; retried after the lease`, cause))
      )
    }
    return claimed.length
  }, traced("Sagas.runDue"))

  const get = (agentId: string, id: string) =>
    Effect.flatMap(store.get(id), (r) =>
      r && r.buyerAgentId === agentId ? Effect.succeed(toSaga(r)) : Effect.fail(notFound(id))
    )

  const list = Effect.fnUntraced(function* (
    agentId: string,
    options: { readonly limit?: number; readonly cursor?: string } = {}
  ) {
    const limit = Math.max(1, Math.min(SAGA_PAGE_MAX, options.limit ?? SAGA_PAGE_MAX))
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined)
      return yield* new InvalidInput({ message: "cursor is not valid", field: "cursor" })
    const rows = yield* store.listForBuyer(agentId, limit + 1, before)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map(toSaga),
      nextCursor: rows.length > limit && last !== undefined ? encodeTimeCursor(last) : null
    }
  })

  const sagasOfTransactions = (agentId: string, transactionIds: ReadonlyArray<string>) =>
    Effect.map(
      store.sagasOfTransactions(agentId, transactionIds),
      (owned) => new Map(owned.map((o) => [o.transactionId, o.sagaId]))
    )

  const service: SagasService = { start, advance, drive, runDue, get, list, sagasOfTransactions }
  return service
})

export class Sagas extends Context.Service<Sagas, SagasService>()("agent-commerce/Sagas") {
  /**
   * Provides the domain services it uses; only ports stay open (stores, config, and the purchase
   * domain's Offers, NegotiatedPrices and OrderOwners, which the app answers).
   */
  static readonly layer = Layer.effect(Sagas, make).pipe(
    Layer.provide(SagaSteps.layer),
    Layer.provide([
      Events.layer,
      Ledger.layer,
      Wallet.layer,
      Settlement.layer,
      Refusals.layer,
      WriteReceipts.layer,
      Orders.layer
    ])
  )
}
