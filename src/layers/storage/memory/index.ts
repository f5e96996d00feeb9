// The in-memory storage layer: every store port over one MemoryDb, plus its Transactor.
import { MemoryIdempotencyStore } from "../../idempotency/IdempotencyStore.memory.js"
import { MemoryCatalogStore } from "../../commerce/CatalogStore.memory.js"
import { MemoryCommerceStore } from "../../commerce/CommerceStore.memory.js"
import { MemoryDisputeStore } from "../../commerce/DisputeStore.memory.js"
import { MemoryWalletStore } from "../../wallet/WalletStore.memory.js"
import { MemoryAnalyticsStore } from "../../reputation/AnalyticsStore.memory.js"
import { Layer } from "effect"
import { MemoryMarketplaceStore } from "../../marketplace/MarketplaceStore.memory.js"
import { MemoryKnowledgeStore } from "../../knowledge/KnowledgeStore.memory.js"
import { MemoryKeysStore } from "../../keys/KeysStore.memory.js"
import { MemoryRateLimitStore } from "../../keys/RateLimitStore.memory.js"
import { MemoryEventStore } from "../../events/EventStore.memory.js"
import { MemoryWebhookStore } from "../../webhooks/WebhookStore.memory.js"
import { MemoryLedgerStore } from "../../ledger/LedgerStore.memory.js"
import { MemorySettlementStore } from "../../commerce/SettlementStore.memory.js"
import { MemoryDb, MemoryTransactor } from "./MemoryDb.js"
import { MemoryInvestStore } from "../../invest/InvestStore.memory.js"
import { MemoryFakeProcessorStore } from "../../payments/FakeProcessorStore.memory.js"
import { MemoryPaymentsStore } from "../../payments/PaymentsStore.memory.js"
import { MemoryProjectsStore } from "../../projects/ProjectsStore.memory.js"
import { MemoryBuildStore } from "../../projects/BuildStore.memory.js"
import { MemorySessionStore } from "../../sessions/SessionStore.memory.js"
import { MemoryNegotiationStore } from "../../negotiation/NegotiationStore.memory.js"
import { MemoryMppStore } from "../../mpp/MppStore.memory.js"
import { MemorySagaStore } from "../../saga/SagaStore.memory.js"

/** The stores over the commerce tables (memoryState.ts): catalogue, transactions, disputes, wallets, analytics. */
export const MemoryCommerceStoresLive = Layer.mergeAll(
  MemoryCatalogStore,
  MemoryWalletStore,
  MemoryCommerceStore,
  MemoryDisputeStore,
  MemoryAnalyticsStore
)

export const MemoryStorageLive = Layer.mergeAll(
  MemoryTransactor,
  MemoryCommerceStoresLive,
  MemoryMarketplaceStore,
  MemoryKnowledgeStore,
  MemoryKeysStore,
  MemoryRateLimitStore,
  MemoryLedgerStore,
  MemorySettlementStore.pipe(Layer.provide([MemoryLedgerStore, MemoryCommerceStoresLive, MemoryEventStore])),
  MemoryEventStore,
  MemoryWebhookStore,
  MemoryIdempotencyStore,
  MemoryProjectsStore,
  MemoryBuildStore,
  MemorySessionStore,
  MemoryInvestStore,
  MemoryPaymentsStore,
  MemoryFakeProcessorStore,
  MemoryNegotiationStore,
  MemorySagaStore,
  MemoryMppStore
).pipe(
  Layer.provide(MemoryDb.layer)
)
