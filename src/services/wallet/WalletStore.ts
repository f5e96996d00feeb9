// WalletStore: the storage port for wallets (policies), recharge requests and the spend sums the
// policies are checked against. Adapters: src/layers/wallet/WalletStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface RechargeRequest {
  readonly id: string
  readonly agentId: string
  readonly amountCents: number
  readonly reason: string
  /** granted: credited at once (fake payments); requested: waits for the payments layer to charge it. */
  readonly status: "granted" | "requested"
  readonly ledgerEntryId: string | null
  readonly createdAt: string
}

/**
 * A running total that does not match its transactions: an agent-day's spend (`serviceId` null),
 * or an agent-day-service's usage (calls and cents).
 */
export interface SpendDrift {
  readonly agentId: string
  readonly day: string
  readonly serviceId: string | null
  readonly kept: number
  readonly recomputed: number
  readonly keptCalls: number | null
  readonly recomputedCalls: number | null
}

/** Storage port for wallets (policies) and the spend sums policies are checked against. */
export interface WalletStoreService {
  /** The wallet row, locked for this unit of work (`SELECT … FOR UPDATE`); inserted as `initial` when missing. */
  readonly lock: (initial: WalletRecord) => Effect.Effect<WalletRecord, StorageUnavailable>
  /**
   * For a purchase: the wallet row and the ledger balance of the agent's wallet account, both
   * locked for this unit of work in that order, with the balance read under the lock (on
   * Postgres one statement: docs/performance.md). The ledger then checks the purchase's debit
   * against this balance instead of locking the account again (Ledger.prepare's `locked`).
   */
  readonly lockForPurchase: (
    initial: WalletRecord
  ) => Effect.Effect<{ readonly wallet: WalletRecord; readonly balanceCents: number }, StorageUnavailable>
  readonly get: (agentId: string) => Effect.Effect<WalletRecord | undefined, StorageUnavailable>
  readonly put: (row: WalletRecord) => Effect.Effect<void, StorageUnavailable>
  /**
   * Sum of the agent's completed (not refunded) purchases created at or after `sinceIso`, a UTC
   * day boundary (the day's or the month's start), read from running totals per agent and UTC
   * day that the transaction writes keep (docs/commerce.md): at most a month of rows.
   */
  readonly spentSince: (agentId: string, sinceIso: string) => Effect.Effect<number, StorageUnavailable>
  /**
   * Money the agent has committed but not yet spent: the escrow of its running sagas (escrow
   * step succeeded, settle not yet) and of its pending orders. Counted against the daily and
   * monthly limits with the spend, so that at every instant spent + held stays within them. Reads
   * only running sagas and pending orders.
   */
  readonly heldCents: (agentId: string) => Effect.Effect<number, StorageUnavailable>
  /**
   * Adds `cents` (negative to give back) to the agent's spend of the UTC day of `atIso`, for wallet
   * debits that are not purchases (an investment, a project's creation charge), in the caller's
   * unit of work. Purchases keep their totals with the transaction write.
   */
  readonly addSpend: (agentId: string, atIso: string, cents: number) => Effect.Effect<void, StorageUnavailable>
  /**
   * Running totals (spend per day, usage per day and service) that differ from a recomputation
   * over the transactions (empty: none).
   */
  readonly spendDrift: Effect.Effect<ReadonlyArray<SpendDrift>, StorageUnavailable>
  /** Pending approvals of the agent that have not expired at `nowIso`. */
  readonly countPendingApprovals: (agentId: string, nowIso: string) => Effect.Effect<number, StorageUnavailable>
  readonly insertRecharge: (request: RechargeRequest) => Effect.Effect<void, StorageUnavailable>
  /** Recharge requests waiting for the payments layer (status requested), oldest first. */
  readonly listRequestedRecharges: (limit: number) => Effect.Effect<ReadonlyArray<RechargeRequest>, StorageUnavailable>
}

export class WalletStore extends Context.Service<WalletStore, WalletStoreService>()("agent-commerce/WalletStore") {}
