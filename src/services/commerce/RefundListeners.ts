// RefundListeners: the port through which a refund of a completed purchase (a dispute resolved for
// the buyer) tells the parties that follow the purchase from outside the commerce domain, in the
// refund's own unit of work. ACP answers it (acp/AcpRefundListeners.ts: the checkout session's order
// event notice is due again, so the agent platform hears of the refund), so Disputes calls no ACP code.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { TransactionRecord } from "../../schema/commerce/transactions.js"

export interface RefundListenersService {
  /** Called inside the refund's unit of work, after the purchase was written refunded (`tx` as written). */
  readonly refunded: (tx: TransactionRecord) => Effect.Effect<void, StorageUnavailable>
}

export class RefundListeners extends Context.Service<RefundListeners, RefundListenersService>()(
  "agent-commerce/RefundListeners"
) {}
