// The Postgres storage layer: migrations first, then every store port and the Transactor.
import { PgIdempotencyStore } from "../../idempotency/IdempotencyStore.postgres.js"
import { PgCatalogStore } from "../../commerce/CatalogStore.postgres.js"
import { PgCommerceStore } from "../../commerce/CommerceStore.postgres.js"
import { PgDisputeStore } from "../../commerce/DisputeStore.postgres.js"
import { PgWalletStore } from "../../wallet/WalletStore.postgres.js"
import { PgAnalyticsStore } from "../../reputation/AnalyticsStore.postgres.js"
import { Layer } from "effect"
import { PgMarketplaceStore } from "../../marketplace/MarketplaceStore.postgres.js"
import { PgKnowledgeStore } from "../../knowledge/KnowledgeStore.postgres.js"
import { PgKeysStore } from "../../keys/KeysStore.postgres.js"
import { PgRateLimitStore } from "../../keys/RateLimitStore.postgres.js"
import { PgEventStore } from "../../events/EventStore.postgres.js"
import { PgWebhookStore } from "../../webhooks/WebhookStore.postgres.js"
import { PgLedgerStore } from "../../ledger/LedgerStore.postgres.js"
import { PgSettlementStore } from "../../commerce/SettlementStore.postgres.js"
import { EmbeddedMigrationsLive, MigrationsLive, PgClientLive, PgTransactor } from "./PgDb.js"
import { PgInvestStore } from "../../invest/InvestStore.postgres.js"
import { PgFakeProcessorStore } from "../../payments/FakeProcessorStore.postgres.js"
import { PgPaymentsStore } from "../../payments/PaymentsStore.postgres.js"
import { PgProjectsStore } from "../../projects/ProjectsStore.postgres.js"
import { PgBuildStore } from "../../projects/BuildStore.postgres.js"
import { PgSessionStore } from "../../sessions/SessionStore.postgres.js"
import { PgNegotiationStore } from "../../negotiation/NegotiationStore.postgres.js"
import { PgMppStore } from "../../mpp/MppStore.postgres.js"
import { PgSagaStore } from "../../saga/SagaStore.postgres.js"

/** Every store port and the Transactor over an SqlClient, without migrations. */
const PgStoresOnly = Layer.mergeAll(
  PgTransactor,
  PgCatalogStore,
  PgWalletStore,
  PgCommerceStore,
  PgDisputeStore,
  PgAnalyticsStore,
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
