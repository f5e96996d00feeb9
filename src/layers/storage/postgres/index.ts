// The Postgres storage layer: migrations first, then every store port and the Transactor.
import { PgIdempotencyStore } from "./idempotency.js"
import { PgCommerceStoresLive } from "./commerce.js"
import { Layer } from "effect"
import { PgKnowledgeStore, PgMarketplaceStore } from "./catalog.js"
import { PgKeysStore, PgRateLimitStore } from "./keys.js"
import { PgEventStore } from "./events.js"
import { PgWebhookStore } from "./webhooks.js"
import { PgLedgerStore } from "./ledger.js"
import { PgSettlementStore } from "./settlement.js"
import { EmbeddedMigrationsLive, MigrationsLive, PgClientLive, PgTransactor } from "./PgDb.js"
import { PgInvestStore } from "./invest.js"
import { PgFakeProcessorStore, PgPaymentsStore } from "./payments.js"
import { PgBuildStore, PgProjectsStore, PgSessionStore } from "./projects.js"
import { PgNegotiationStore } from "./negotiation.js"
import { PgMppStore, PgSagaStore } from "./saga.js"

/** Every store port and the Transactor over an SqlClient, without migrations. */
const PgStoresOnly = Layer.mergeAll(
  PgTransactor,
  PgCommerceStoresLive,
  PgMarketplaceStore,
  PgKnowledgeStore,
  PgKeysStore,
  PgRateLimitStore,
  PgLedgerStore,
  PgSettlementStore,
  PgEventStore,
  PgWebhookStore,
  PgIdempotencyStore,
  PgProjectsStore,
  PgBuildStore,
  PgSessionStore,
  PgInvestStore,
  PgPaymentsStore,
  PgFakeProcessorStore,
  PgNegotiationStore,
  PgSagaStore,
  PgMppStore
)

export const PgStoresLive = PgStoresOnly.pipe(Layer.provide(MigrationsLive))

export const PgStorageLive = PgStoresLive.pipe(Layer.provideMerge(PgClientLive))

/** The same stores over the embedded Postgres (migrated without the cross-process lock). */
export const EmbeddedStoresLive = PgStoresOnly.pipe(Layer.provide(EmbeddedMigrationsLive))
