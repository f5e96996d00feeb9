// Webhooks: each agent's endpoint (URL, event filter, signing secret) and the durable delivery of
// outbox events to it — fan-out into delivery rows, leased claims, Standard Webhooks signatures,
// retries with backoff and jitter, claims fair across endpoints (round-robin, a per-endpoint cap), a
// failing endpoint backed off as a whole (single probes) and disabled after a day (docs/webhooks.md).
// The jobs live beside it: endpoints.ts (configuration), delivery.ts (the worker's steps),
// policy.ts (the numbers and pure rules), signing.ts (the envelope and signatures), and the ports
// WebhookStore.ts and WebhookTransport.ts.
import { Context, Effect, Layer } from "effect"
import type { Conflict, InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type { ClaimedDelivery } from "../../schema/webhooks/records.js"
import type { DeliveryAttempt } from "../../schema/webhooks/deliveries.js"
import type { PutWebhookBody, PutWebhookResponse, WebhookConfig } from "../../schema/webhooks/endpoint.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { makeDelivery } from "./delivery.js"
import { makeEndpoints } from "./endpoints.js"
import type { WebhookDeps } from "./deps.js"
import { WebhookStore, type WebhookStoreService } from "./WebhookStore.js"
import { WebhookTransport } from "./WebhookTransport.js"

export interface WebhooksService {
  readonly getConfig: (agentId: string) => Effect.Effect<WebhookConfig, NotFound | StorageUnavailable>
  /** Creates or replaces the agent's endpoint; the secret is in the answer only on creation. */
  readonly put: (
    agentId: string,
    body: PutWebhookBody
  ) => Effect.Effect<PutWebhookResponse, InvalidInput | Conflict | StorageUnavailable>
  readonly remove: (agentId: string) => Effect.Effect<void, NotFound | StorageUnavailable>
  /** A new secret, shown once; the old one keeps signing (second signature) for the grace period. */
  readonly rotateSecret: (
    agentId: string
  ) => Effect.Effect<{ readonly webhook: WebhookConfig; readonly secret: string }, NotFound | StorageUnavailable>
  /** Enqueues a webhook.test event for the agent's active endpoint. */
  readonly sendTest: (
    agentId: string
  ) => Effect.Effect<
    { readonly eventId: string; readonly type: "webhook.test" },
    NotFound | Conflict | StorageUnavailable
  >
  /** The delivery log, newest first, a keyset page: `nextCursor` names the page's last attempt. */
  readonly listAttempts: (
    agentId: string,
    options?: { readonly limit?: number; readonly eventId?: string; readonly cursor?: string }
  ) => Effect.Effect<
    { readonly data: Array<DeliveryAttempt>; readonly nextCursor: string | null },
    InvalidInput | StorageUnavailable
  >
  readonly listDeliveries: WebhookStoreService["listDeliveries"]
  /** Turns new outbox events into delivery rows for subscribed, active endpoints; returns events taken. */
  readonly fanOut: (limit?: number) => Effect.Effect<number, StorageUnavailable>
  /** Claims up to `limit` deliveries under a lease, fairly across endpoints, in one short transaction. */
  readonly claimDue: (limit?: number) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageUnavailable>
  /** Sends one claimed delivery and records it; a storage outage is logged (the lease brings the row back). */
  readonly deliver: (delivery: ClaimedDelivery) => Effect.Effect<void>
  /** Claims due deliveries and sends them concurrently; returns how many. */
  readonly deliverDue: (limit?: number) => Effect.Effect<number, StorageUnavailable>
  /** One deterministic step of the worker: fan out every new event, then deliver what is due. */
  readonly runOnce: Effect.Effect<{ readonly dispatched: number; readonly delivered: number }, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const deps: WebhookDeps = {
    store: yield* WebhookStore,
    transport: yield* WebhookTransport,
    events: yield* Events,
    ids: yield* Ids,
    atomically: (yield* Transactor).atomically
  }
  const endpoints = makeEndpoints(deps)
  const delivery = makeDelivery(deps)
  return Webhooks.of({ ...endpoints, listDeliveries: deps.store.listDeliveries, ...delivery })
})

export class Webhooks extends Context.Service<Webhooks, WebhooksService>()("agent-commerce/Webhooks") {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Webhooks, make).pipe(Layer.provide([Events.layer]))
}
