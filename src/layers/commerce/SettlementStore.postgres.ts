// Postgres settlement writer: a settled purchase (ledger entry, postings and balances, transaction,
// delivery, the buyer's running totals, events) in one statement.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { SettlementStore } from "../../services/commerce/SettlementStore.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import { makePurchaseRows, purchaseLockCtes, SERVICE_COLUMNS, type ServiceRow, toService, transactionCtes } from "./postgres.js"
import { eventsCte } from "../events/EventStore.postgres.js"
import { entryCtes } from "../ledger/LedgerStore.postgres.js"
import { iso, orUnavailable } from "../storage/postgres/PgDb.js"

export const PgSettlementStore = Layer.effect(
  SettlementStore,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    open: Effect.fnUntraced(function* ({ wallet, serviceId }) {
        type Opened = ServiceRow & { wAgentId: string; wPolicy: WalletRecord["policy"]; wCreatedAt: Date; wUpdatedAt: Date; balance: number | null }
        // The purchase's locks (commerce.ts purchaseLockCtes) and the service, in one statement.
        // One row always: the wallet's half is null until makePurchaseRows made it, the service's when unknown.
        // No join condition is hashable, so the plan is nested loops in this order: w, then b, locked in that order.
        const select = sql<Opened>`WITH ${purchaseLockCtes(sql, wallet.agentId)},
            s AS (SELECT ${sql.literal(SERVICE_COLUMNS)} FROM commerce_services WHERE id = ${serviceId})
          SELECT w.agent_id AS w_agent_id, w.policy AS w_policy, w.created_at AS w_created_at, w.updated_at AS w_updated_at, b.balance, s.*
          FROM (SELECT 1) one LEFT JOIN w ON TRUE LEFT JOIN b ON w.agent_id IS NOT NULL LEFT JOIN s ON TRUE`
        let [row] = yield* select
        if (row!.wAgentId === null || row!.balance === null) {
          yield* makePurchaseRows(sql, wallet)
          ;[row] = yield* select
        }
        const { wAgentId, wPolicy, wCreatedAt, wUpdatedAt, balance, ...service } = row!
        return {
          wallet: { agentId: wAgentId, policy: wPolicy, createdAt: iso(wCreatedAt), updatedAt: iso(wUpdatedAt) },
          balanceCents: balance ?? 0,
          service: service.id === null ? undefined : toService(service)
        }
      }, orUnavailable),
    write: ({ entry, tx, delivery, events }) =>
      orUnavailable(
        sql`WITH ${entry !== null ? sql`${entryCtes(sql, entry)}, ` : sql``}${transactionCtes(sql, tx, delivery)}${
          events.length > 0 ? sql`, ${eventsCte(sql, events)}` : sql``
        } SELECT 1`
      ).pipe(Effect.asVoid)
  }))
)
