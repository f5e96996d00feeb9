// Outgoing webhooks, the stored rows (what the WebhookStore port reads and writes).
import type { EventType } from "../events/events.js"
import type { AttemptStatus } from "./deliveries.js"
import type { EventFilter } from "./endpoint.js"

/** The endpoint row: one per agent. `secret` leaves the store only to sign and, once, to its owner. */
export interface EndpointRecord {
  readonly id: string
  readonly agentId: string
  readonly url: string
  readonly events: ReadonlyArray<EventFilter>
  readonly enabled: boolean
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: string | null
  readonly failingSince: string | null
  readonly disabledAt: string | null
  readonly disabledReason: string | null
  /** Failed attempts in a row; reset by a 2xx. */
  readonly consecutiveFailures: number
  /** Set while the endpoint is failing: when its next single probe may be claimed (null: healthy). */
  readonly retryAt: string | null
  readonly lastError: string | null
  readonly lastErrorAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** One endpoint's open deliveries, as GET /webhook shows them (read through indexes, never the history). */
export interface BacklogSummary {
  readonly pending: number
  readonly oldestCreatedAt: string | null
  /** The earliest due time among them (a lease's end for one being sent). */
  readonly nextDueAt: string | null
}

/** pending → delivering (leased) → succeeded | pending (retry) | failed (retries exhausted) | cancelled. */
export type DeliveryStatus = "pending" | "delivering" | "succeeded" | "failed" | "cancelled"

/** One event for one endpoint. `body` is fixed at fan-out so every retry sends the same bytes. */
export interface DeliveryRecord {
  readonly id: string
  readonly endpointId: string
  readonly agentId: string
  readonly eventId: string
  readonly eventType: EventType
  readonly body: string
  readonly status: DeliveryStatus
  /** Attempts started so far (incremented when a worker claims the row). */
  readonly attempts: number
  /** pending: when the next attempt is due; delivering: when the lease expires; terminal: null. */
  readonly dueAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** A claimed row; `leaseExpired` when it was taken back from a worker that never reported. */
export interface ClaimedDelivery extends DeliveryRecord {
  readonly leaseExpired: boolean
}

export interface AttemptRecord {
  readonly id: string
  readonly deliveryId: string
  readonly agentId: string
  readonly eventId: string
  readonly eventType: EventType
  readonly attempt: number
  readonly status: AttemptStatus
  readonly responseStatus: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly attemptedAt: string
  readonly nextRetryAt: string | null
}
