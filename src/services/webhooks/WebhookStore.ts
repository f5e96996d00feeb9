// The webhooks' storage port: endpoints, delivery rows (the per-endpoint queue) and the attempt log.
// Adapters: src/layers/webhooks/WebhookStore.memory.ts and WebhookStore.postgres.ts.
import { Context, type Effect } from "effect"
import type { Conflict, StorageUnavailable } from "../../schema/platform/errors.js"
import type { DomainEvent } from "../../schema/events/events.js"
import type {
  AttemptRecord,
  BacklogSummary,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord
} from "../../schema/webhooks/records.js"

export interface WebhookStoreService {
  readonly getEndpoint: (agentId: string) => Effect.Effect<EndpointRecord | undefined, StorageUnavailable>
  /** The agent's endpoint, locked for this unit of work. */
  readonly getEndpointForUpdate: (agentId: string) => Effect.Effect<EndpointRecord | undefined, StorageUnavailable>
  /** Fails with Conflict when the agent already has an endpoint (two concurrent creations). */
  readonly insertEndpoint: (record: EndpointRecord) => Effect.Effect<void, StorageUnavailable | Conflict>
  readonly updateEndpoint: (record: EndpointRecord) => Effect.Effect<void, StorageUnavailable>
  /** Removes the endpoint with its deliveries and attempts; false when there was none. */
  readonly deleteEndpoint: (agentId: string) => Effect.Effect<boolean, StorageUnavailable>
  /**
   * Up to `limit` outbox events not yet fanned out, oldest first, each with its agent's endpoint,
   * marked as fanned out in this unit of work (rows another worker holds are skipped). Events of
   * agents without an endpoint may be marked without being returned.
   */
  readonly takeNewEvents: (
    now: string,
    limit: number
  ) => Effect.Effect<
    ReadonlyArray<{ readonly event: DomainEvent; readonly endpoint: EndpointRecord | undefined }>,
    StorageUnavailable
  >
  /** Inserts a delivery; a second row for the same (endpoint, event) is ignored. */
  readonly insertDelivery: (record: DeliveryRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Claims up to `limit` deliveries at `now`, fairly across endpoints: endpoints that are enabled,
   * not disabled and have claimable work are visited least recently served first (round-robin).
   * A healthy endpoint (`retryAt` null) gives its due rows — pending ones whose time has come and
   * leased ones whose lease expired — oldest first (outbox order), while fewer than `perEndpoint`
   * of its rows hold an unexpired lease. A failing endpoint (`retryAt` set) gives one row, its
   * oldest open one (the probe), once `retryAt` has come and none of its rows is in flight. Each
   * claimed row becomes `delivering` with one more attempt and a lease until `leaseUntil`.
   * Endpoints and rows another worker holds are skipped (SKIP LOCKED), so replicas share the caps.
   */
  readonly claimDue: (
    now: string,
    leaseUntil: string,
    limit: number,
    perEndpoint: number
  ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageUnavailable>
  /** The endpoint's open deliveries: how many, the oldest, the next due (indexed reads). */
  readonly backlog: (endpointId: string) => Effect.Effect<BacklogSummary, StorageUnavailable>
  /** Writes the outcome only if the row is still the claimed attempt (status delivering, same attempts). */
  readonly finishDelivery: (
    record: DeliveryRecord,
    claimedAttempt: number
  ) => Effect.Effect<boolean, StorageUnavailable>
  readonly insertAttempt: (record: AttemptRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Up to `limit` attempts of the agent's endpoint (of one event when `eventId` is given), newest
   * first, starting after the attempt `beforeId` (a keyset page on (agent, seq) or (agent, event,
   * seq); an unknown `beforeId` gives an empty page).
   */
  readonly listAttempts: (
    agentId: string,
    page: { readonly limit: number; readonly eventId?: string | undefined; readonly beforeId?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<AttemptRecord>, StorageUnavailable>
  /**
   * Up to `limit` deliveries of the agent's endpoint, oldest first (outbox order), starting after
   * the delivery `afterId` (a keyset page on (agent, seq); tests and operators).
   */
  readonly listDeliveries: (
    agentId: string,
    page: { readonly limit: number; readonly afterId?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<DeliveryRecord>, StorageUnavailable>
}

export class WebhookStore extends Context.Service<WebhookStore, WebhookStoreService>()("agent-commerce/WebhookStore") {}
