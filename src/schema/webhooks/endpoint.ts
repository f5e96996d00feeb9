// Outgoing webhooks, the endpoint's side: its configuration as the owner sets and sees it, and the
// answers of the configuration routes.
import { Schema } from "effect"
import { EventType } from "../events/events.js"

/** An event type, or "*" for every type. */
export const EventFilter = Schema.Union([EventType, Schema.Literal("*")])
export type EventFilter = typeof EventFilter.Type

export const MAX_URL_LENGTH = 2048
export const MAX_EVENT_FILTERS = 50

export const WebhookUrl = Schema.String.pipe(
  Schema.check(Schema.isMinCodePoints(1, { message: "url is required" })),
  Schema.check(Schema.isMaxCodePoints(MAX_URL_LENGTH, { message: `url must be at most ${MAX_URL_LENGTH} characters` }))
)

/** PUT /webhook: the whole configuration (omitted `events` = every type; omitted `enabled` = true). */
export const PutWebhookBody = Schema.Struct({
  url: WebhookUrl,
  events: Schema.optional(
    Schema.Array(EventFilter).pipe(
      Schema.check(Schema.isMinLength(1, { message: 'events must name at least one event type, or ["*"]' })),
      Schema.check(Schema.isMaxLength(MAX_EVENT_FILTERS))
    )
  ),
  enabled: Schema.optional(Schema.Boolean)
})
export type PutWebhookBody = typeof PutWebhookBody.Type

/**
 * active: receives events; failing: consecutive failures, its backlog waits while single probes are
 * retried with growing delays; paused: enabled=false by its owner; disabled: turned off after
 * sustained failure (its backlog kept).
 */
export const WebhookStatus = Schema.Literals(["active", "failing", "paused", "disabled"])
export type WebhookStatus = typeof WebhookStatus.Type

/** The endpoint as its owner sees it. Never carries the secret. */
export class WebhookConfig extends Schema.Class<WebhookConfig>("WebhookConfig")({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventFilter),
  enabled: Schema.Boolean,
  status: WebhookStatus,
  /** Why the platform disabled the endpoint (status "disabled"); cleared by PUT with enabled=true. */
  disabledReason: Schema.NullOr(Schema.String),
  disabledAt: Schema.NullOr(Schema.String),
  /** First failed attempt since the last successful one (null when the last attempt succeeded). */
  failingSince: Schema.NullOr(Schema.String),
  /** After a rotation the previous secret still signs (a second v1 signature) until this time. */
  previousSecretExpiresAt: Schema.NullOr(Schema.String),
  /** Failed attempts in a row (reset by any 2xx); at FAILING_AFTER the status becomes "failing". */
  consecutiveFailures: Schema.Int,
  /** The last failed attempt's error (kept after a success, for the record) and when it happened. */
  lastError: Schema.NullOr(Schema.String),
  lastErrorAt: Schema.NullOr(Schema.String),
  /** Deliveries not yet succeeded nor given up (pending or being sent). */
  pendingCount: Schema.Int,
  /** When the oldest of them was queued, and how long ago (seconds); null when none. */
  oldestPendingAt: Schema.NullOr(Schema.String),
  oldestPendingAgeSeconds: Schema.NullOr(Schema.Int),
  /**
   * When the next attempt is due: the next probe while failing; null when nothing waits or the
   * endpoint is paused or disabled.
   */
  nextAttemptAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}) {}

export const PutWebhookResponse = Schema.Struct({
  webhook: WebhookConfig,
  created: Schema.Boolean,
  /** The signing secret (`whsec_` + base64), present only when the endpoint was created: store it now. */
  secret: Schema.optional(Schema.String)
})
export type PutWebhookResponse = typeof PutWebhookResponse.Type

export const RotateSecretResponse = Schema.Struct({
  webhook: WebhookConfig,
  /** The new signing secret, shown this once. */
  secret: Schema.String
})

export const WebhookTestResponse = Schema.Struct({
  eventId: Schema.String,
  type: Schema.Literal("webhook.test")
})
