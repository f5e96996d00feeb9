// Webhooks: each agent's endpoint (URL, event filter, signing secret) — created, replaced, removed,
// its secret rotated, a test event sent — and its delivery log read. The durable delivery of outbox
// events to it is WebhookDelivery's (WebhookDelivery.ts, run by WebhookWorker.ts); the numbers and
// pure rules are in policy.ts, the envelope and signatures in signing.ts, and the ports in
// WebhookStore.ts and WebhookTransport.ts (docs/webhooks.md).
import { Clock, Context, Effect, Layer } from "effect"
import { Conflict, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import type { EndpointRecord } from "../../schema/webhooks/records.js"
import type { DeliveryAttempt } from "../../schema/webhooks/deliveries.js"
import type { PutWebhookBody, PutWebhookResponse, WebhookConfig } from "../../schema/webhooks/endpoint.js"
import { Ids, Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import { Events } from "../events/Events.js"
import {
  DEFAULT_ATTEMPTS_LIMIT,
  normalizeFilter,
  PREVIOUS_SECRET_GRACE_MS,
  SECRET_BYTES,
  statusOf,
  toAttempt,
  toConfig
} from "./policy.js"
import { WebhookStore } from "./WebhookStore.js"
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
}

const iso = (ms: number) => new Date(ms).toISOString()

const noEndpoint = (agentId: string) =>
  new NotFound({
    message: "no webhook is configured for this agent; PUT /webhook first",
    resource: "webhook",
    id: agentId
  })

const TEST_MESSAGE = "Test event from agent-commerce: your endpoint is reachable and verifies signatures."

const make = Effect.gen(function* () {
  const store = yield* WebhookStore
  const transport = yield* WebhookTransport
  const events = yield* Events
  const ids = yield* Ids
  const { atomically } = yield* Transactor

  const newSecret = Effect.map(
    ids.secret(SECRET_BYTES),
    (b64url) => `whsec_${Buffer.from(b64url, "base64url").toString("base64")}`
  )

  /** The configuration with its health and backlog, as of now. */
  const view = Effect.fnUntraced(function* (e: EndpointRecord) {
    const backlog = yield* store.backlog(e.id)
    return toConfig(e, backlog, yield* Clock.currentTimeMillis)
  })

  const getConfig = Effect.fnUntraced(function* (agentId: string) {
    const e = yield* store.getEndpoint(agentId)
    if (!e) return yield* Effect.fail(noEndpoint(agentId))
    return yield* view(e)
  })

  /** Creates or replaces the agent's endpoint, in one unit of work; the secret is in the answer only on creation. */
  const upsert = Effect.fnUntraced(function* (
    agentId: string,
    url: string,
    filter: EndpointRecord["events"],
    enabled: boolean
  ) {
    const at = iso(yield* Clock.currentTimeMillis)
    const existing = yield* store.getEndpointForUpdate(agentId)
    if (existing) {
      // Any PUT is the owner acting: a platform disable is lifted, a failing endpoint's backoff
      // ends (its backlog goes out at once: "try now"), and a new URL starts clean.
      const fresh = existing.disabledAt !== null || existing.url !== url
      const updated: EndpointRecord = {
        ...existing,
        url,
        events: filter,
        enabled,
        disabledAt: null,
        disabledReason: null,
        failingSince: fresh ? null : existing.failingSince,
        consecutiveFailures: 0,
        retryAt: null,
        updatedAt: at
      }
      yield* store.updateEndpoint(updated)
      return { webhook: yield* view(updated), created: false } satisfies PutWebhookResponse
    }
    const secret = yield* newSecret
    const record: EndpointRecord = {
      id: yield* ids.make("whep"),
      agentId,
      url,
      events: filter,
      enabled,
      secret,
      previousSecret: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      consecutiveFailures: 0,
      retryAt: null,
      lastError: null,
      lastErrorAt: null,
      createdAt: at,
      updatedAt: at
    }
    yield* store.insertEndpoint(record)
    return { webhook: yield* view(record), created: true, secret } satisfies PutWebhookResponse
  })

  /** Creates or replaces the agent's endpoint; the secret is in the answer only on creation. */
  const put = Effect.fnUntraced(function* (agentId: string, body: PutWebhookBody) {
    const url = body.url.trim()
    // DNS happens here, outside the unit of work.
    yield* transport.check(url)
    return yield* atomically(upsert(agentId, url, normalizeFilter(body.events), body.enabled ?? true))
  }, traced("Webhooks.put"))

  const remove = (agentId: string) =>
    atomically(
      Effect.flatMap(store.deleteEndpoint(agentId), (found) => (found ? Effect.void : Effect.fail(noEndpoint(agentId))))
    ).pipe(traced("Webhooks.remove"))

  /** A new secret, shown once; the old one keeps signing (second signature) for the grace period. */
  const rotateSecret = Effect.fnUntraced(
    function* (agentId: string) {
      const now = yield* Clock.currentTimeMillis
      const existing = yield* store.getEndpointForUpdate(agentId)
      if (!existing) return yield* Effect.fail(noEndpoint(agentId))
      const secret = yield* newSecret
      const updated: EndpointRecord = {
        ...existing,
        secret,
        previousSecret: existing.secret,
        previousSecretExpiresAt: iso(now + PREVIOUS_SECRET_GRACE_MS),
        updatedAt: iso(now)
      }
      yield* store.updateEndpoint(updated)
      return { webhook: yield* view(updated), secret }
    },
    atomically,
    traced("Webhooks.rotateSecret")
  )

  /** Enqueues a webhook.test event for the agent's active endpoint. */
  const sendTest = Effect.fnUntraced(
    function* (agentId: string) {
      const e = yield* store.getEndpoint(agentId)
      if (!e) return yield* Effect.fail(noEndpoint(agentId))
      const status = statusOf(e)
      if (status !== "active" && status !== "failing") {
        return yield* Effect.fail(
          new Conflict({ message: `the webhook is ${status}; PUT it with enabled=true first`, state: status })
        )
      }
      const event = yield* events.emit(agentId, "webhook.test", { endpointId: e.id, message: TEST_MESSAGE })
      return { eventId: event.id, type: "webhook.test" as const }
    },
    atomically,
    traced("Webhooks.sendTest")
  )

  /** The delivery log, newest first, a keyset page: `nextCursor` names the page's last attempt. */
  const listAttempts = Effect.fnUntraced(function* (
    agentId: string,
    options: { readonly limit?: number; readonly eventId?: string; readonly cursor?: string } = {}
  ) {
    const limit = options.limit ?? DEFAULT_ATTEMPTS_LIMIT
    let beforeId: string | undefined
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor) as { a?: unknown } | undefined
      if (!c || typeof c.a !== "string") {
        return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
      }
      beforeId = c.a
    }
    const rows = yield* store.listAttempts(agentId, { limit: limit + 1, eventId: options.eventId, beforeId })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map(toAttempt),
      nextCursor: rows.length > limit && last ? encodeCursor({ a: last.id }) : null
    }
  })

  return Webhooks.of({ getConfig, put, remove, rotateSecret, sendTest, listAttempts })
})

export class Webhooks extends Context.Service<Webhooks, WebhooksService>()("agent-commerce/Webhooks") {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Webhooks, make).pipe(Layer.provide([Events.layer]))
}
