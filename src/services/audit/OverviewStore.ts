// OverviewStore: the figures of many agents' wallets at once, for the owner's overview. A read-only
// projection over the wallet, ledger, spend, saga and approval tables, answered in a fixed number of
// statements whatever the number of agents (the wallet's own port answers one agent at a time).
// Adapters: src/layers/audit/OverviewStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { WalletPolicy } from "../../schema/commerce/wallets.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

/** One agent's wallet figures, as Wallet.view computes them for one agent. */
export interface AgentFigures {
  /** null: the agent has no wallet row yet (its policy is the initial one). */
  readonly policy: WalletPolicy | null
  readonly balanceCents: number
  readonly spentTodayCents: number
  readonly spentThisMonthCents: number
  readonly heldCents: number
  readonly pendingApprovals: number
}

export interface OverviewStoreService {
  /**
   * The figures of each agent: spend counted from the UTC day `dayStart` and month `monthStart`
   * (both "YYYY-MM-DD") up to `today`; pending approvals that have not expired at `nowIso`.
   */
  readonly figures: (
    agentIds: ReadonlyArray<string>,
    at: { readonly dayStart: string; readonly monthStart: string; readonly today: string; readonly nowIso: string }
  ) => Effect.Effect<ReadonlyMap<string, AgentFigures>, StorageUnavailable>
}

export class OverviewStore extends Context.Service<OverviewStore, OverviewStoreService>()(
  "agent-commerce/OverviewStore"
) {}
