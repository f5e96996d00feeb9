// What the webhooks' jobs (endpoints.ts, delivery.ts) are made with, apart from the service that
// makes them, so the jobs import no file that imports them.
import type { EventsService } from "../events/Events.js"
import type { Ids, Transactor } from "../platform/Db.js"
import type { WebhookStoreService } from "./WebhookStore.js"
import type { WebhookTransportService } from "./WebhookTransport.js"

/** Taken once, when the layer is built. */
export interface WebhookDeps {
  readonly store: WebhookStoreService
  readonly transport: WebhookTransportService
  readonly events: EventsService
  readonly ids: Ids["Service"]
  readonly atomically: Transactor["Service"]["atomically"]
}
