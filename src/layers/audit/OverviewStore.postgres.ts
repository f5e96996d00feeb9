// Postgres OverviewStore: every agent's wallet figures in one statement. Its own copies of the wallet
// store's fragments (the balance with its credit shards, the escrow of running sagas and pending
// orders, the spend days, the pending approvals), per agent of the list, so the overview costs the same few round
// trips for one agent or for a hundred. test/suites/audit-overview.test.ts checks its figures
// against Wallet.view's.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { WalletPolicy } from "../../schema/commerce/wallets.js"
import { OverviewStore } from "../../services/audit/OverviewStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeRows } from "../storage/postgres/rows.js"

const FiguresRow = Schema.Struct({
  agentId: Schema.String,
  policy: Schema.NullOr(WalletPolicy),
  balance: Schema.Number,
  spentToday: Schema.Number,
  spentMonth: Schema.Number,
  held: Schema.Number,
  pending: Schema.Number
})
const rows = decodeRows(FiguresRow)

export const PgOverviewStore = Layer.effect(
  OverviewStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      figures: (agentIds, at) =>
        agentIds.length === 0
          ? Effect.succeed(new Map())
          : orUnavailable(
              sql`WITH a AS (SELECT DISTINCT jsonb_array_elements_text(${JSON.stringify(agentIds)}::jsonb) AS agent_id)
                SELECT a.agent_id, w.policy,
                  ((SELECT COALESCE(SUM(l.balance), 0) FROM ledger_balances l WHERE l.account = 'wallet:' || a.agent_id)
                    + (SELECT COALESCE(SUM(c.amount), 0) FROM ledger_balance_credits c
                       WHERE c.account = 'wallet:' || a.agent_id))::bigint AS balance,
                  (SELECT COALESCE(SUM(d.spent_cents), 0) FROM agent_spend_days d
                    WHERE d.agent_id = a.agent_id AND d.day >= ${at.dayStart}::date)::bigint AS spent_today,
                  (SELECT COALESCE(SUM(d.spent_cents), 0) FROM agent_spend_days d
                    WHERE d.agent_id = a.agent_id AND d.day >= ${at.monthStart}::date)::bigint AS spent_month,
                  ((SELECT COALESCE(SUM(s.price_cents), 0) FROM sagas s
                    WHERE s.buyer_agent_id = a.agent_id AND s.status = 'running' AND s.price_cents IS NOT NULL
                      AND s.steps @> '[{"name":"escrow","status":"succeeded"}]'::jsonb
                      AND NOT s.steps @> '[{"name":"settle","status":"succeeded"}]'::jsonb)
                    + (SELECT COALESCE(SUM(o.price_cents), 0) FROM orders o
                       WHERE o.buyer_agent_id = a.agent_id AND o.status = 'pending' AND o.saga_id IS NULL))::bigint AS held,
                  (SELECT count(*) FROM commerce_approvals p
                    WHERE p.agent_id = a.agent_id AND p.status = 'pending' AND p.expires_at > ${at.nowIso})::int AS pending
                FROM a LEFT JOIN commerce_wallets w ON w.agent_id = a.agent_id`
            ).pipe(
              Effect.flatMap(rows),
              Effect.map(
                (list) =>
                  new Map(
                    list.map((r) => [
                      r.agentId,
                      {
                        policy: r.policy,
                        balanceCents: r.balance,
                        spentTodayCents: r.spentToday,
                        spentThisMonthCents: r.spentMonth,
                        heldCents: r.held,
                        pendingApprovals: r.pending
                      }
                    ])
                  )
              )
            )
    }
  })
)
