// The commerce routes' path and query parameters and their page bodies.
import { Schema } from "effect"
import { Cursor, IsoTime, PageLimit, QueryInt, QueryNumber } from "../../schema/platform/common.js"
import { Approval, ApprovalStatus, Purchase } from "../../schema/commerce/approvals.js"
import { Transaction, TransactionStatus } from "../../schema/commerce/transactions.js"
import { CommerceService } from "../../schema/commerce/services.js"
import { Dispute } from "../../schema/commerce/disputes.js"
import { PricingModel } from "../../schema/commerce/common.js"

export const Id = Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
export const IdParam = Schema.Struct({ id: Id })
const NonNegativeIntString = QueryInt(0, Number.MAX_SAFE_INTEGER)

export const ServiceListParams = Schema.Struct({
  category: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(60)))),
  pricingModel: Schema.optional(PricingModel),
  minPriceCents: Schema.optional(NonNegativeIntString),
  maxPriceCents: Schema.optional(NonNegativeIntString),
  minRating: Schema.optional(QueryNumber({ minimum: 0, maximum: 5 })),
  sellerId: Schema.optional(Id),
  q: Schema.optional(
    Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))
  ),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit)
})

export const TransactionListParams = Schema.Struct({
  role: Schema.optional(Schema.Literals(["buyer", "seller"])),
  serviceId: Schema.optional(Id),
  status: Schema.optional(TransactionStatus),
  from: Schema.optional(IsoTime),
  to: Schema.optional(IsoTime),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit)
})

export const ServicePage = Schema.Struct({
  data: Schema.Array(CommerceService),
  nextCursor: Schema.NullOr(Schema.String)
})
export const TransactionPage = Schema.Struct({
  data: Schema.Array(Transaction),
  nextCursor: Schema.NullOr(Schema.String)
})
// Keyset pages (default and most: 100 rows): pass `nextCursor` back as `cursor`; null on the last page.
export const ApprovalList = Schema.Struct({ data: Schema.Array(Approval), nextCursor: Schema.NullOr(Schema.String) })
export const DisputeList = Schema.Struct({ data: Schema.Array(Dispute), nextCursor: Schema.NullOr(Schema.String) })
export const ApprovalParams = Schema.Struct({
  status: Schema.optional(ApprovalStatus),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(PageLimit)
})
export const DisputeParams = Schema.Struct({ cursor: Schema.optional(Cursor), limit: Schema.optional(PageLimit) })

/**
 * A purchase whose seller has not answered yet (its order is pending, the price held in escrow):
 * answered 202 rather than 201. Listed before Purchase in the buy's successes, so the response
 * takes this status exactly when the purchase is pending.
 */
export const PendingPurchase = Schema.Struct({
  ...Purchase.fields,
  status: Schema.Literal("pending"),
  transaction: Transaction,
  approval: Schema.Null
})
