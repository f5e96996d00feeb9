// SellerBoard: the seller's side of one of the owner's agents — its order queue, the orders that
// ended lately and what it earned. A fixed number of bounded reads whatever the agent's history:
// the agent (ownership), a page of pending orders (the order store's keyset page), the totals, the
// latest ended orders and the buyers' names in one read.
import { Clock, Context, Effect, Layer } from "effect"
import { splitSettlement } from "../../schema/ledger/ledger.js"
import {
  SELLER_BOARD_PAGE,
  type SellerBoard as SellerBoardView,
  type SellerOrder
} from "../../schema/orders/sellerBoard.js"
import { cents, decodeTimeCursor, encodeTimeCursor } from "../../schema/platform/common.js"
import { InvalidInput, type NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { utcDayStart, utcMonthStart } from "../../schema/wallet/policy.js"
import { Keys } from "../keys/Keys.js"
import { OrderStore } from "./OrderStore.js"
import { type BoardOrder, SellerBoardStore } from "./SellerBoardStore.js"

/** How many ended orders the board shows (the seller's order list pages through the rest). */
const ENDED_SHOWN = 10

export interface SellerBoardService {
  /**
   * The board of the account's agent (another account's, or none: NotFound): pending orders oldest
   * first from `cursor`, `limit` of them (default 10), the latest ended ones and the earnings.
   */
  readonly board: (
    accountId: string,
    agentId: string,
    options?: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
  ) => Effect.Effect<SellerBoardView, NotFound | InvalidInput | StorageUnavailable>
  /**
   * What changes the board, condensed, for the page's live stamp: pending count and held share, the
   * all-time earnings, the newest ended order. Two small reads (no month sum); the agent must
   * already be known to be the caller's.
   */
  readonly stamp: (agentId: string) => Effect.Effect<string, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const keys = yield* Keys
  const orders = yield* OrderStore
  const store = yield* SellerBoardStore

  const view = (o: BoardOrder, names: ReadonlyMap<string, { readonly name: string }>): SellerOrder => ({
    id: o.id,
    serviceId: o.serviceId,
    serviceName: o.serviceName,
    tierId: o.tierId,
    priceCents: cents(o.priceCents),
    sellerCents: cents(splitSettlement(o.priceCents).sellerCents),
    buyerAgentId: o.buyerAgentId,
    buyerName: names.get(o.buyerAgentId)?.name ?? null,
    mode: o.mode,
    status: o.status,
    createdAt: o.createdAt,
    deadlineAt: o.deadlineAt,
    answeredAt: o.answeredAt,
    error: o.error,
    push:
      o.push === null ? null : { attempts: o.push.attempts, acceptedAt: o.push.acceptedAt, lastError: o.push.lastError }
  })

  const board = Effect.fnUntraced(function* (
    accountId: string,
    agentId: string,
    options: { readonly cursor?: string | undefined; readonly limit?: number | undefined } = {}
  ) {
    yield* keys.ownedAgent(accountId, agentId)
    const after = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && after === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not one this list gave", field: "cursor" }))
    }
    const limit = Math.max(1, Math.min(100, options.limit ?? SELLER_BOARD_PAGE))
    const now = yield* Clock.currentTimeMillis
    const [page, totals, ended] = yield* Effect.all(
      [
        orders.listForSeller(agentId, { status: "pending", after, limit: limit + 1 }),
        store.totals(agentId, {
          dayStart: new Date(utcDayStart(now)).toISOString(),
          monthStart: new Date(utcMonthStart(now)).toISOString()
        }),
        store.ended(agentId, ENDED_SHOWN)
      ],
      { concurrency: 1 }
    )
    const pending = page.slice(0, limit)
    const buyers = [...new Set([...pending, ...ended].map((o) => o.buyerAgentId))]
    const names = buyers.length === 0 ? new Map() : yield* keys.agentsById(buyers)
    const result: SellerBoardView = {
      agentId,
      pending: {
        orders: pending.map((o) => view(o, names)),
        count: totals.pendingCount,
        nextCursor: page.length > limit ? encodeTimeCursor(page[limit - 1]!) : null
      },
      ended: ended.map((o) => view(o, names)),
      earnings: {
        todayCents: cents(totals.todayCents),
        thisMonthCents: cents(totals.thisMonthCents),
        allTimeCents: cents(totals.allTimeCents),
        heldCents: cents(totals.heldCents)
      },
      generatedAt: new Date(now).toISOString()
    }
    return result
  })

  const stamp = Effect.fnUntraced(function* (agentId: string) {
    const [totals, ended] = yield* Effect.all([store.totals(agentId, undefined), store.ended(agentId, 1)], {
      concurrency: 1
    })
    const last = ended[0]
    return JSON.stringify([
      totals.pendingCount,
      totals.heldCents,
      totals.allTimeCents,
      last ? [last.id, last.status] : null
    ])
  })

  return { board, stamp } satisfies SellerBoardService
})

export class SellerBoard extends Context.Service<SellerBoard, SellerBoardService>()("agent-commerce/SellerBoard") {
  /** Provides the Keys service it reads; the stores stay open. */
  static readonly layer = Layer.effect(SellerBoard, make).pipe(Layer.provide(Keys.layer))
}
