// The in-memory storage layer: every store port over one MemoryDb, plus its Transactor.
import { MemoryIdempotencyStore } from "./idempotency.js"
import { Layer } from "effect"
import { MemoryKnowledgeStore, MemoryMarketplaceStore } from "./catalog.js"
import { MemoryKeysStore, MemoryRateLimitStore } from "./keys.js"
import { MemoryEventStore } from "./events.js"
import { MemoryLedgerStore } from "./ledger.js"
import { MemoryDb, MemoryTransactor } from "./MemoryDb.js"
import { MemoryInvestStore } from "./invest.js"
import { MemoryBuildStore, MemoryProjectsStore, MemorySessionStore } from "./projects.js"

export const MemoryStorageLive = Layer.mergeAll(
  MemoryTransactor,
  MemoryMarketplaceStore,
  MemoryKnowledgeStore,
  MemoryKeysStore,
  MemoryRateLimitStore,
  MemoryLedgerStore,
  MemoryEventStore,
  MemoryIdempotencyStore,
  MemoryProjectsStore,
  MemoryBuildStore,
  MemorySessionStore,
  MemoryInvestStore
).pipe(
  Layer.provide(MemoryDb.layer)
)
