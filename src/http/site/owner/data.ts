// What the owner's pages show, read through the domain services only: one agent's page, the
// overview of every agent, and the small "what changed" stamps their scripts poll.
import { Effect } from "effect"
import { type Dispute } from "../../../schema/commerce/disputes.js"
import { type Transaction } from "../../../schema/commerce/transactions.js"
import { type WalletView } from "../../../schema/commerce/wallets.js"
import type { AuditEntry } from "../../../schema/audit/audit.js"
import type { Overview as OverviewView } from "../../../schema/audit/overview.js"
import type { RefusalView } from "../../../schema/refusals/refusals.js"
import type { SellerBoard as SellerBoardView } from "../../../schema/orders/sellerBoard.js"
import type { Agent } from "../../../schema/keys/keys.js"
import { AppConfig } from "../../../services/platform/AppConfig.js"
import type { Caller } from "../../../services/keys/Caller.js"
import { Audit } from "../../../services/audit/Audit.js"
import { Overview } from "../../../services/audit/Overview.js"
import { Commerce } from "../../../services/commerce/Commerce.js"
import { Disputes } from "../../../services/commerce/Disputes.js"
import { Keys } from "../../../services/keys/Keys.js"
import { Refusals } from "../../../services/refusals/Refusals.js"
import { SellerBoard } from "../../../services/purchases/SellerBoard.js"
import { Reputation } from "../../../services/reputation/Reputation.js"
import { Wallet } from "../../../services/wallet/Wallet.js"
import { CHART_DAYS } from "./format.js"
import { type NamedApproval, pendingNamed } from "./names.js"
import type { TxFilters } from "./request.js"

/** How many refusals and audit entries a page shows (the rest: the routes and the CSV export). */
export const RECENT = 10

export interface AgentPageData {
  readonly agent: Agent
  readonly accountId: string
  readonly wallet: WalletView
  readonly pending: ReadonlyArray<NamedApproval>
  readonly transactions: { readonly data: ReadonlyArray<Transaction>; readonly nextCursor: string | null }
  readonly filters: TxFilters
  readonly byDay: ReadonlyArray<{ readonly day: string; readonly spentCents: number }>
  readonly reputation: { readonly score: number; readonly band: string }
  readonly disputes: ReadonlyArray<Dispute>
  readonly refusals: ReadonlyArray<RefusalView>
  readonly audit: ReadonlyArray<AuditEntry>
  /** The agent's side as seller: its order queue, ended orders, earnings. */
  readonly sales: SellerBoardView
  readonly payments: "fake" | "stripe"
  /** What the page's script compares with the live stamp. */
  readonly stamp: string
}

export const pendingFor = (caller: Caller, agentId: string) =>
  Effect.map(
    Effect.flatMap(Commerce, (c) => c.listApprovals(caller, "pending")),
    (r) => r.data.filter((a) => a.agentId === agentId)
  )

/**
 * What changes the agent page: the wallet's figures and freeze, what waits, the newest
 * transaction and refusal, and the agent's orders as seller (SellerBoard.stamp). Six small reads;
 * the script reloads the page's parts when it differs.
 */
export const agentStamp = Effect.fnUntraced(function* (caller: Caller, agentId: string) {
  const [wallet, pending, latest, refused, sales] = yield* Effect.all(
    [
      Effect.flatMap(Wallet, (w) => w.view(agentId)),
      pendingFor(caller, agentId),
      Effect.flatMap(Commerce, (c) => c.listTransactions(agentId, { limit: 1 })),
      Effect.flatMap(Refusals, (r) => r.list(caller.accountId, { agentId, limit: 1 })),
      Effect.flatMap(SellerBoard, (s) => s.stamp(agentId))
    ],
    { concurrency: 1 }
  )
  const tx = latest.data[0]
  return JSON.stringify([
    wallet.balanceCents,
    wallet.spentTodayCents,
    wallet.spentThisMonthCents,
    wallet.heldCents,
    wallet.policies,
    pending.map((a) => a.id),
    tx ? [tx.id, tx.status, tx.refundedAt, tx.disputeId] : null,
    refused.refusals[0]?.id ?? null,
    sales
  ])
})

export const agentPageData = Effect.fnUntraced(function* (caller: Caller, agentId: string, filters: TxFilters) {
  const agent = yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
  const config = yield* AppConfig
  const [wallet, pending, transactions, usage, reputation, disputes, refusals, audit, sales, stamp] = yield* Effect.all(
    [
      Effect.flatMap(Wallet, (w) => w.view(agentId)),
      pendingNamed(caller, agentId),
      Effect.flatMap(Commerce, (c) =>
        c.listTransactions(agentId, {
          ...filters,
          ...(filters.from ? { from: `${filters.from}T00:00:00.000Z` } : {}),
          ...(filters.to ? { to: `${filters.to}T23:59:59.999Z` } : {}),
          limit: 20
        })
      ),
      Effect.flatMap(Reputation, (r) => r.usage(agentId, CHART_DAYS)),
      Effect.flatMap(Reputation, (r) => r.reputationOf(agentId)),
      Effect.flatMap(Disputes, (d) => d.list(agentId)),
      Effect.flatMap(Refusals, (r) => r.list(caller.accountId, { agentId, limit: RECENT })),
      Effect.flatMap(Audit, (a) => a.list(agentId, { limit: RECENT })),
      Effect.flatMap(SellerBoard, (s) => s.board(caller.accountId, agentId)),
      agentStamp(caller, agentId)
    ],
    { concurrency: 1 }
  )
  return {
    agent,
    accountId: caller.accountId,
    wallet,
    pending,
    transactions,
    filters,
    byDay: usage.byDay,
    reputation: { score: reputation.score, band: reputation.band },
    disputes: disputes.data,
    refusals: refusals.refusals,
    audit: audit.entries,
    sales,
    payments: config.payments,
    stamp
  } satisfies AgentPageData
})

export interface OverviewPageData {
  readonly overview: OverviewView
  readonly inbox: ReadonlyArray<NamedApproval>
  readonly refusals: ReadonlyArray<RefusalView>
  readonly stamp: string
}

/** What changes the overview: every agent's figures, limits, freeze, pending count and last refusal. */
export const overviewStamp = (o: OverviewView): string =>
  JSON.stringify(o.agents.map((a) => ({ ...a, lastRefusal: a.lastRefusal?.id ?? null })))

export const overviewData = Effect.fnUntraced(function* (caller: Caller) {
  const [overview, inbox, refusals] = yield* Effect.all(
    [
      Effect.flatMap(Overview, (o) => o.overview(caller.accountId)),
      pendingNamed(caller),
      Effect.flatMap(Refusals, (r) => r.list(caller.accountId, { limit: RECENT * 2 }))
    ],
    { concurrency: 1 }
  )
  return { overview, inbox, refusals: refusals.refusals, stamp: overviewStamp(overview) } satisfies OverviewPageData
})
