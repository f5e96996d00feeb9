// The Postgres storage layer: migrations first, then every store port and the Transactor.
import { PgIdempotencyStore } from "./idempotency.js"
import { Layer } from "effect"
import { PgKnowledgeStore, PgMarketplaceStore } from "./catalog.js"
import { PgKeysStore, PgRateLimitStore } from "./keys.js"
import { PgEventStore } from "./events.js"
import { PgLedgerStore } from "./ledger.js"
import { MigrationsLive, PgClientLive, PgTransactor } from "./PgDb.js"
import { PgInvestStore } from "./invest.js"
import { PgBuildStore, PgProjectsStore, PgSessionStore } from "./projects.js"

export const PgStoresLive = Layer.mergeAll(
  PgTransactor,
  PgMarketplaceStore,
  PgKnowledgeStore,
  PgKeysStore,
  PgRateLimitStore,
  PgLedgerStore,
  PgEventStore,
  PgIdempotencyStore,
  PgProjectsStore,
  PgBuildStore,
  PgSessionStore,
  PgInvestStore
).pipe(Layer.provide(MigrationsLive))

export const PgStorageLive = PgStoresLive.pipe(Layer.provideMerge(PgClientLive))
