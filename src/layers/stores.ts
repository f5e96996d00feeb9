// Every store adapter of each storage, composed: the memory stores over one MemoryDb, the Postgres
// stores over a migrated SqlClient, and the same Postgres stores over the embedded database.
// src/layers/app.ts chooses one of them from STORAGE.
import { MemoryIdempotencyStore } from "./idempotency/IdempotencyStore.memory.js"
import { MemoryCatalogStore } from "./commerce/CatalogStore.memory.js"
import { MemoryPurchaseStore } from "./purchases/PurchaseStore.memory.js"
import { MemoryDisputeStore } from "./commerce/DisputeStore.memory.js"
import { MemoryWalletStore } from "./wallet/WalletStore.memory.js"
import { MemoryAnalyticsStore } from "./reputation/AnalyticsStore.memory.js"
import { MemoryMarketplaceStore } from "./marketplace/MarketplaceStore.memory.js"
import { MemoryKnowledgeStore } from "./knowledge/KnowledgeStore.memory.js"
import { MemoryKeysStore } from "./keys/KeysStore.memory.js"
import { MemoryRateLimitStore } from "./keys/RateLimitStore.memory.js"
import { MemoryEventStore } from "./events/EventStore.memory.js"
import { MemoryWebhookStore } from "./webhooks/WebhookStore.memory.js"
import { MemoryLedgerStore } from "./ledger/LedgerStore.memory.js"
import { MemorySettlementStore } from "./purchases/SettlementStore.memory.js"
import { MemoryDb, MemoryTransactor } from "./storage/memory/MemoryDb.js"
import { MemoryInvestStore } from "./invest/InvestStore.memory.js"
import { MemoryFakeProcessorStore } from "./payments/FakeProcessorStore.memory.js"
import { MemoryPaymentsStore } from "./payments/PaymentsStore.memory.js"
import { MemoryProjectsStore } from "./projects/ProjectsStore.memory.js"
import { MemoryBuildStore } from "./projects/BuildStore.memory.js"
import { MemorySessionStore } from "./sessions/SessionStore.memory.js"
import { MemoryAcpSessionStore } from "./acp/AcpSessionStore.memory.js"
import { MemoryNegotiationStore } from "./negotiation/NegotiationStore.memory.js"
import { MemoryMppStore } from "./mpp/MppStore.memory.js"
import { MemoryX402Store } from "./x402/X402Store.memory.js"
import { MemorySagaStore } from "./saga/SagaStore.memory.js"
import { MemoryAuditStore } from "./audit/AuditStore.memory.js"
import { MemoryOverviewStore } from "./audit/OverviewStore.memory.js"
import { PgIdempotencyStore } from "./idempotency/IdempotencyStore.postgres.js"
import { PgCatalogStore } from "./commerce/CatalogStore.postgres.js"
import { PgPurchaseStore } from "./purchases/PurchaseStore.postgres.js"
import { PgDisputeStore } from "./commerce/DisputeStore.postgres.js"
import { PgWalletStore } from "./wallet/WalletStore.postgres.js"
import { PgAnalyticsStore } from "./reputation/AnalyticsStore.postgres.js"
import { PgMarketplaceStore } from "./marketplace/MarketplaceStore.postgres.js"
import { PgKnowledgeStore } from "./knowledge/KnowledgeStore.postgres.js"
import { PgKeysStore } from "./keys/KeysStore.postgres.js"
import { PgRateLimitStore } from "./keys/RateLimitStore.postgres.js"
import { PgEventStore } from "./events/EventStore.postgres.js"
import { PgWebhookStore } from "./webhooks/WebhookStore.postgres.js"
import { PgLedgerStore } from "./ledger/LedgerStore.postgres.js"
import { PgSettlementStore } from "./purchases/SettlementStore.postgres.js"
import { EmbeddedMigrationsLive, MigrationsLive, PgClientLive, PgTransactor } from "./storage/postgres/PgDb.js"
import { PgInvestStore } from "./invest/InvestStore.postgres.js"
import { PgFakeProcessorStore } from "./payments/FakeProcessorStore.postgres.js"
import { PgPaymentsStore } from "./payments/PaymentsStore.postgres.js"
import { PgProjectsStore } from "./projects/ProjectsStore.postgres.js"
import { PgBuildStore } from "./projects/BuildStore.postgres.js"
import { PgSessionStore } from "./sessions/SessionStore.postgres.js"
import { PgAcpSessionStore } from "./acp/AcpSessionStore.postgres.js"
import { PgNegotiationStore } from "./negotiation/NegotiationStore.postgres.js"
import { PgMppStore } from "./mpp/MppStore.postgres.js"
import { PgX402Store } from "./x402/X402Store.postgres.js"
import { PgSagaStore } from "./saga/SagaStore.postgres.js"
import { PgAuditStore } from "./audit/AuditStore.postgres.js"
import { PgOverviewStore } from "./audit/OverviewStore.postgres.js"
import { MemoryRefusalsStore } from "./refusals/RefusalsStore.memory.js"
import { PgRefusalsStore } from "./refusals/RefusalsStore.postgres.js"
import { MemoryWriteReceiptStore } from "./idempotency/WriteReceiptStore.memory.js"
import { PgWriteReceiptStore } from "./idempotency/WriteReceiptStore.postgres.js"
import { MemoryOrderStore } from "./purchases/OrderStore.memory.js"
import { PgOrderStore } from "./purchases/OrderStore.postgres.js"
import { MemorySellerBoardStore } from "./purchases/SellerBoardStore.memory.js"
import { PgSellerBoardStore } from "./purchases/SellerBoardStore.postgres.js"
import { MemoryPushConfigStore } from "./a2a/PushConfigStore.memory.js"
import { MemoryAcpOrderNoticeStore } from "./acp/AcpOrderNoticeStore.memory.js"
import { PgAcpOrderNoticeStore } from "./acp/AcpOrderNoticeStore.postgres.js"
import { PgPushConfigStore } from "./a2a/PushConfigStore.postgres.js"
import { MemoryX402TaskStore } from "./a2a/X402TaskStore.memory.js"
import { PgX402TaskStore } from "./a2a/X402TaskStore.postgres.js"
import { Effect, Layer } from "effect"
import { pgClientLayer } from "./storage/postgres/PgDb.js"
import { EmbeddedPostgres, EmbeddedPostgresLive, EmbeddedVacuumLive } from "./storage/embedded.js"

/** The stores over the commerce tables (src/layers/storage/memory/commerceTables.ts): catalogue, transactions, disputes, wallets, analytics. */
export const MemoryPurchaseStoresLive = Layer.mergeAll(
  MemoryCatalogStore,
  MemoryWalletStore,
  MemoryPurchaseStore,
  MemoryDisputeStore,
  MemoryAnalyticsStore
)

export const MemoryStorageLive = Layer.mergeAll(
  MemoryTransactor,
  MemoryPurchaseStoresLive,
  MemoryMarketplaceStore,
  MemoryKnowledgeStore,
  MemoryKeysStore,
  MemoryRateLimitStore,
  MemoryLedgerStore,
  MemorySettlementStore.pipe(
    Layer.provide([MemoryLedgerStore, MemoryPurchaseStoresLive, MemoryEventStore, MemoryOrderStore, MemoryKeysStore])
  ),
  MemoryEventStore,
  MemoryWebhookStore,
  MemoryIdempotencyStore,
  MemoryWriteReceiptStore,
  MemoryProjectsStore,
  MemoryBuildStore,
  MemorySessionStore,
  MemoryAcpSessionStore,
  MemoryInvestStore,
  MemoryPaymentsStore,
  MemoryFakeProcessorStore,
  MemoryNegotiationStore,
  MemorySagaStore,
  MemoryMppStore,
  MemoryX402Store,
  MemoryAuditStore,
  MemoryOverviewStore,
  MemoryRefusalsStore,
  MemoryOrderStore,
  MemorySellerBoardStore,
  MemoryPushConfigStore,
  MemoryAcpOrderNoticeStore,
  MemoryX402TaskStore
).pipe(Layer.provide(MemoryDb.layer))

/** Every store port and the Transactor over an SqlClient, without migrations. */
const PgStoresOnly = Layer.mergeAll(
  PgTransactor,
  PgCatalogStore,
  PgWalletStore,
  PgPurchaseStore,
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
  PgWriteReceiptStore,
  PgProjectsStore,
  PgBuildStore,
  PgSessionStore,
  PgAcpSessionStore,
  PgInvestStore,
  PgPaymentsStore,
  PgFakeProcessorStore,
  PgNegotiationStore,
  PgSagaStore,
  PgMppStore,
  PgX402Store,
  PgAuditStore,
  PgOverviewStore,
  PgRefusalsStore,
  PgOrderStore,
  PgSellerBoardStore,
  PgPushConfigStore,
  PgAcpOrderNoticeStore,
  PgX402TaskStore
)

export const PgStoresLive = PgStoresOnly.pipe(Layer.provide(MigrationsLive))

export const PgStorageLive = PgStoresLive.pipe(Layer.provideMerge(PgClientLive))

/** The same stores over the embedded Postgres (migrated without the cross-process lock). */
export const EmbeddedStoresLive = PgStoresOnly.pipe(Layer.provide(EmbeddedMigrationsLive))

/** Every store port and the Transactor on the embedded database (one connection: one session), and its vacuum pass. */
export const EmbeddedStorageLive = Layer.merge(EmbeddedStoresLive, EmbeddedVacuumLive).pipe(
  Layer.provideMerge(Layer.unwrap(Effect.map(EmbeddedPostgres, (pg) => pgClientLayer({ path: pg.socketPath }, 1)))),
  Layer.provide(EmbeddedPostgresLive)
)
