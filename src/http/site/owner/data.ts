// What the owner's agent page shows, read through the domain services only.
import { Effect } from "effect"
import { type Approval } from "../../../schema/commerce/approvals.js"
import { type Dispute } from "../../../schema/commerce/disputes.js"
import { type Transaction } from "../../../schema/commerce/transactions.js"
import { type WalletView } from "../../../schema/commerce/wallets.js"
import type { Agent } from "../../../schema/keys/keys.js"
import { AppConfig } from "../../../services/platform/AppConfig.js"
import type { Caller } from "../../../services/keys/Caller.js"
import { Commerce } from "../../../services/commerce/Commerce.js"
import { Disputes } from "../../../services/commerce/Disputes.js"
import { Keys } from "../../../services/keys/Keys.js"
import { Reputation } from "../../../services/reputation/Reputation.js"
import { Wallet } from "../../../services/wallet/Wallet.js"
import { CHART_DAYS } from "./format.js"
import type { TxFilters } from "./request.js"

export interface AgentPageData {
  readonly agent: Agent
  readonly wallet: WalletView
  readonly pending: ReadonlyArray<Approval>
  readonly transactions: { readonly data: ReadonlyArray<Transaction>; readonly nextCursor: string | null }
  readonly filters: TxFilters
  readonly byDay: ReadonlyArray<{ readonly day: string; readonly spentCents: number }>
  readonly reputation: { readonly score: number; readonly band: string }
  readonly disputes: ReadonlyArray<Dispute>
  readonly payments: "fake" | "stripe"
}

export const pendingFor = (caller: Caller, agentId: string) =>
  Effect.map(
    Effect.flatMap(Commerce, (c) => c.listApprovals(caller, "pending")),
    (r) => r.data.filter((a) => a.agentId === agentId)
  )

export const agentPageData = Effect.fnUntraced(function* (caller: Caller, agentId: string, filters: TxFilters) {
  const agent = yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
  const config = yield* AppConfig
  const [wallet, pending, transactions, usage, reputation, disputes] = yield* Effect.all(
    [
      Effect.flatMap(Wallet, (w) => w.view(agentId)),
      pendingFor(caller, agentId),
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
      Effect.flatMap(Disputes, (d) => d.list(agentId))
    ],
    { concurrency: 1 }
  )
  return {
    agent,
    wallet,
    pending,
    transactions,
    filters,
    byDay: usage.byDay,
    reputation: { score: reputation.score, band: reputation.band },
    disputes: disputes.data,
    payments: config.payments
  } satisfies AgentPageData
})
