// Reviews of a transaction: the body a buyer sends, the stored row and the view.
import { Schema } from "effect"
import { Timestamp } from "../platform/common.js"

export const ReviewBody = Schema.Struct({
  rating: Schema.Int.pipe(
    Schema.check(Schema.isBetween({ minimum: 1, maximum: 5 }, { message: "rating must be an integer from 1 to 5" }))
  ),
  text: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(2000))))
})

export interface ReviewRecord {
  readonly id: string
  readonly transactionId: string
  readonly serviceId: string
  readonly reviewerAgentId: string
  readonly sellerAgentId: string
  readonly rating: number
  readonly text: string | null
  readonly createdAt: string
}

export const ReviewView = Schema.Struct({
  id: Schema.String,
  transactionId: Schema.String,
  serviceId: Schema.String,
  reviewerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  rating: Schema.Int,
  text: Schema.NullOr(Schema.String),
  createdAt: Timestamp
})
