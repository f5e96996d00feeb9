// The commerce domain's RefundListeners port, answered by ACP: a purchase an ACP checkout session
// made was refunded after its order was told completed (a dispute resolved for the buyer), so the
// session's order event notice is due again, in the refund's own unit of work: the worker reads the
// order, now carrying its refund adjustment, and sends it as an `order_update` (docs/acp.md "Order
// events"). Without a receiver configured there are no notices, and nothing to do.
import { Clock, Effect, Layer } from "effect"
import { sessionOfPurchaseKey } from "../../schema/acp/sessions.js"
import { RefundListeners } from "../commerce/RefundListeners.js"
import { AcpOrderNoticeStore } from "./AcpOrderNoticeStore.js"

export const AcpRefundListenersLive = Layer.effect(
  RefundListeners,
  Effect.map(AcpOrderNoticeStore, (store) =>
    RefundListeners.of({
      refunded: Effect.fnUntraced(function* (tx) {
        const sessionId = sessionOfPurchaseKey(tx.idempotencyKey)
        if (sessionId === null) return
        // The buyer's own notice only: a purchase keyed like a session by another agent reopens nothing.
        yield* store.reopen(sessionId, tx.buyerAgentId, new Date(yield* Clock.currentTimeMillis).toISOString())
      })
    })
  )
)
