// Domain events: the catalogue of event types and the envelope written to the outbox.
import { Schema } from "effect"

/** Every event kind the platform emits (docs/events.md has the payload of each). */
export const EventType = Schema.Literals([
  "transaction.completed",
  "transaction.refunded",
  "transaction.failed",
  "order.created",
  "order.expired",
  "negotiation.updated",
  "saga.step_changed",
  "saga.completed",
  "saga.compensated",
  "dispute.updated",
  "build.status_changed",
  "payment.succeeded",
  "wallet.low_balance",
  "wallet.recharged",
  "approval.requested",
  "review.created",
  "webhook.disabled",
  "webhook.test"
])
export type EventType = typeof EventType.Type
export const eventTypes = EventType.literals

export class DomainEvent extends Schema.Class<DomainEvent>("DomainEvent")({
  id: Schema.String,
  type: EventType,
  /** The agent the event is addressed to (its webhook receives it). */
  agentId: Schema.String,
  occurredAt: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown)
}) {}
