// Outgoing webhooks, the delivery log: one attempt per row, its keyset page, and the envelope
// every delivery carries.
import { Schema } from "effect"
import { EventType } from "../events/events.js"
import { Cursor, QueryInt } from "../platform/common.js"

export const AttemptStatus = Schema.Literals(["succeeded", "failed"])
export type AttemptStatus = typeof AttemptStatus.Type

/** One attempt to deliver one event to the endpoint. */
export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  id: Schema.String,
  deliveryId: Schema.String,
  /** The event id, which is also the `webhook-id` header (stable across retries). */
  eventId: Schema.String,
  eventType: EventType,
  /** 1 for the first try; at most MAX_ATTEMPTS. */
  attempt: Schema.Int,
  status: AttemptStatus,
  /** The receiver's HTTP status (null when no response: refused address, connection error, timeout). */
  responseStatus: Schema.NullOr(Schema.Int),
  durationMs: Schema.Int,
  error: Schema.NullOr(Schema.String),
  attemptedAt: Schema.String,
  /** When the next attempt is due (null after a success or the last attempt). */
  nextRetryAt: Schema.NullOr(Schema.String)
}) {}

export const DeliveriesUrlParams = Schema.Struct({
  limit: Schema.optional(QueryInt(1, 100)),
  eventId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  /** The previous page's `nextCursor`: the page after it (older attempts). */
  cursor: Schema.optional(Cursor)
})

/** A keyset page of the delivery log; `nextCursor` is null on the last page. */
export const DeliveriesResponse = Schema.Struct({
  data: Schema.Array(DeliveryAttempt),
  nextCursor: Schema.NullOr(Schema.String)
})

/** The JSON body of every delivery (Standard Webhooks envelope plus the event id). */
export const WebhookEnvelope = Schema.Struct({
  id: Schema.String,
  type: EventType,
  timestamp: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown)
})
