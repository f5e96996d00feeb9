// The in-memory storage layer: every store port over one MemoryDb, plus its Transactor.
import { MemoryIdempotencyStore } from "./idempotency.js"
import { MemoryCommerceStoresLive } from "./commerce.js"
import { Layer } from "effect"
import { MemoryKnowledgeStore, MemoryMarketplaceStore } from "./catalog.js"
import { MemoryKeysStore, MemoryRateLimitStore } from "./keys.js"
import { MemoryEventStore } from "./events.js"
import { MemoryWebhookStore } from "./webhooks.js"
import { MemoryLedgerStore } from "./ledger.js"
import { MemorySettlementStore } from "./settlement.js"
import { MemoryDb, MemoryTransactor } from "./MemoryDb.js"
import { MemoryInvestStore } from "./invest.js"
import { MemoryFakeProcessorStore, MemoryPaymentsStore } from "./payments.js"
import { MemoryBuildStore, MemoryProjectsStore, MemorySessionStore } from "./projects.js"
import { MemoryNegotiationStore } from "./negotiation.js"
import { MemoryMppStore, MemorySagaStore } from "./saga.js"

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
