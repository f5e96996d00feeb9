// The marketplace's storage port: the template catalogue and the subscription plans.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { Plan, Template } from "../../schema/marketplace/marketplace.js"

export interface MarketplaceStoreService {
  readonly listTemplates: Effect.Effect<ReadonlyArray<Template>, StorageUnavailable>
  readonly listPlans: Effect.Effect<ReadonlyArray<Plan>, StorageUnavailable>
  /** Insert or refresh seed rows; safe to run on every start. */
  readonly upsertTemplates: (templates: ReadonlyArray<Template>) => Effect.Effect<void, StorageUnavailable>
  readonly upsertPlans: (plans: ReadonlyArray<Plan>) => Effect.Effect<void, StorageUnavailable>
}

export class MarketplaceStore extends Context.Service<MarketplaceStore, MarketplaceStoreService>()(
  "agent-commerce/MarketplaceStore"
) {}
