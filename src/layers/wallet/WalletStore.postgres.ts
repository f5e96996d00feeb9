// Postgres WalletStore: wallets (row-locked FOR UPDATE), recharge requests, the escrow a buyer's
// running sagas hold, and the running spend totals the policies are checked against (with their
// drift check). Rows are decoded, except the purchase lock's (hot: the MPP paid call takes it;
// test/suites/row-mapping-commerce.test.ts pins its mapping).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { WalletPolicy, type WalletRecord } from "../../schema/commerce/wallets.js"
import { dayBoundary } from "../../schema/wallet/policy.js"
import { WalletStore } from "../../services/wallet/WalletStore.js"
import { iso, orUnavailable } from "../storage/postgres/PgDb.js"
import { makePurchaseRows, purchaseLockCtes } from "../storage/postgres/purchaseLock.js"
import { decodeFirst, decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

const WalletRow = Schema.Struct({
  agentId: Schema.String,
  policy: WalletPolicy,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})
const RechargeRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  amountCents: Schema.Number,
  reason: Schema.String,
  status: Schema.Literals(["granted", "requested"]),
  ledgerEntryId: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp
})
const TotalRow = Schema.Struct({ total: Schema.Number })
const CountRow = Schema.Struct({ n: Schema.Number })
const SpendDriftRow = Schema.Struct({
  agentId: Schema.String,
  day: Schema.String,
  kept: Schema.Number,
  recomputed: Schema.Number
})
const UsageDriftRow = Schema.Struct({
  agentId: Schema.String,
  day: Schema.String,
  serviceId: Schema.String,
  kept: Schema.Number,
  recomputed: Schema.Number,
  keptCalls: Schema.Number,
  recomputedCalls: Schema.Number
})
const total = (rows: ReadonlyArray<unknown>) => Effect.map(decodeFirst(TotalRow)(rows), (r) => r?.total ?? 0)

/**
 * The escrow the buyer's running sagas hold (escrow done, settle not yet) and its pending orders
 * hold: read through the partial indexes of running sagas (migration 0021) and pending orders
 * (migration 0027), not the buyer's history.
 */
export const heldStatement = (sql: SqlClient.SqlClient, agentId: string) =>
  sql`SELECT ((SELECT COALESCE(SUM(price_cents), 0) FROM sagas
      WHERE buyer_agent_id = ${agentId} AND status = 'running' AND price_cents IS NOT NULL
        AND steps @> '[{"name":"escrow","status":"succeeded"}]'::jsonb
        AND NOT steps @> '[{"name":"settle","status":"succeeded"}]'::jsonb)
    + (SELECT COALESCE(SUM(price_cents), 0) FROM orders
      WHERE buyer_agent_id = ${agentId} AND status = 'pending' AND saga_id IS NULL))::bigint AS total`

/** Kept running spend per agent-day against a recomputation from the debits that count as spend. */
const SPEND_DRIFT = `
  SELECT COALESCE(k.agent_id, r.agent_id) AS agent_id, COALESCE(k.day, r.day)::text AS day,
    COALESCE(k.spent_cents, 0)::bigint AS kept, COALESCE(r.cents, 0)::bigint AS recomputed
  FROM agent_spend_days k
  FULL OUTER JOIN (
    SELECT agent_id, day, SUM(cents)::bigint AS cents FROM (
      SELECT buyer_agent_id AS agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, price_cents AS cents
      FROM commerce_transactions WHERE status = 'completed'
      UNION ALL
      SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date, amount_cents FROM investments
      UNION ALL
      SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date, cost_cents FROM projects
      WHERE status <> 'failed' AND cost_cents > 0
    ) d GROUP BY 1, 2
  ) r ON r.agent_id = k.agent_id AND r.day = k.day
  WHERE COALESCE(k.spent_cents, 0) <> COALESCE(r.cents, 0)
  ORDER BY 1, 2`

/** Kept usage per agent-day-service against a recomputation from the completed transactions. */
const USAGE_DRIFT = `
  SELECT COALESCE(k.agent_id, r.agent_id) AS agent_id, COALESCE(k.day, r.day)::text AS day,
    COALESCE(k.service_id, r.service_id) AS service_id,
    COALESCE(k.spent_cents, 0)::bigint AS kept, COALESCE(r.cents, 0)::bigint AS recomputed,
    COALESCE(k.calls, 0)::int AS kept_calls, COALESCE(r.calls, 0)::int AS recomputed_calls
  FROM agent_usage_days k
  FULL OUTER JOIN (
    SELECT buyer_agent_id AS agent_id, (created_at AT TIME ZONE 'UTC')::date AS day, service_id,
      count(*)::int AS calls, SUM(price_cents)::bigint AS cents
    FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, 2, 3
  ) r ON r.agent_id = k.agent_id AND r.day = k.day AND r.service_id = k.service_id
  WHERE COALESCE(k.spent_cents, 0) <> COALESCE(r.cents, 0) OR COALESCE(k.calls, 0) <> COALESCE(r.calls, 0)
  ORDER BY 1, 2, 3`

export const PgWalletStore = Layer.effect(
  WalletStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const wallet = decodeFirst(WalletRow)
    // The purchase lock's row, mapped by hand (hot path).
    type LockedRow = { agentId: string; policy: WalletRecord["policy"]; createdAt: Date; updatedAt: Date }
    const toWallet = (r: LockedRow): WalletRecord => ({
      agentId: r.agentId,
      policy: r.policy,
      createdAt: iso(r.createdAt),
      updatedAt: iso(r.updatedAt)
    })
    return {
      lock: Effect.fnUntraced(function* (w) {
        const select = sql`SELECT agent_id, policy, created_at, updated_at FROM commerce_wallets
          WHERE agent_id = ${w.agentId} FOR UPDATE`.pipe(Effect.flatMap(wallet))
        // One statement when the wallet exists (the common case); created on first use.
        const found = yield* select
        if (found !== undefined) return found
        yield* sql`INSERT INTO commerce_wallets (agent_id, policy, created_at, updated_at)
                   VALUES (${w.agentId}, ${json(w.policy)}::jsonb, ${w.createdAt}, ${w.updatedAt})
                   ON CONFLICT (agent_id) DO NOTHING`
        return (yield* select)!
      }, orUnavailable),
      lockForPurchase: Effect.fnUntraced(function* (w) {
        // One statement for what took two (the wallet lock, then Ledger.prepare's balance lock).
        const select = sql<LockedRow & { balance: number | null }>`
            WITH ${purchaseLockCtes(sql, w.agentId)}
            SELECT w.agent_id, w.policy, w.created_at, w.updated_at, b.balance FROM w LEFT JOIN b ON TRUE`
        const found = yield* select
        if (found[0] && found[0].balance !== null) return { wallet: toWallet(found[0]), balanceCents: found[0].balance }
        yield* makePurchaseRows(sql, w)
        const [row] = yield* select
        return { wallet: toWallet(row!), balanceCents: row!.balance ?? 0 }
      }, orUnavailable),
      get: (agentId) =>
        orUnavailable(
          sql`SELECT agent_id, policy, created_at, updated_at FROM commerce_wallets WHERE agent_id = ${agentId}`
        ).pipe(Effect.flatMap(wallet)),
      put: (w) =>
        orUnavailable(
          sql`INSERT INTO commerce_wallets (agent_id, policy, created_at, updated_at)
              VALUES (${w.agentId}, ${json(w.policy)}::jsonb, ${w.createdAt}, ${w.updatedAt})
              ON CONFLICT (agent_id) DO UPDATE SET policy = EXCLUDED.policy, updated_at = EXCLUDED.updated_at`
        ).pipe(Effect.asVoid),
      // Only the buyer's running sagas (partial index sagas_running_buyer_idx), not its history.
      heldCents: (agentId) => orUnavailable(heldStatement(sql, agentId)).pipe(Effect.flatMap(total)),
      addSpend: (agentId, at, cents) =>
        cents === 0
          ? Effect.void
          : orUnavailable(
              sql`INSERT INTO agent_spend_days (agent_id, day, spent_cents)
                  VALUES (${agentId}, (${at}::timestamptz AT TIME ZONE 'UTC')::date, ${cents})
                  ON CONFLICT (agent_id, day) DO UPDATE
                    SET spent_cents = agent_spend_days.spent_cents + excluded.spent_cents`
            ).pipe(Effect.asVoid),
      // From the running totals: at most a month of day rows, whatever the agent's history.
      spentSince: (agentId, since) =>
        Effect.flatMap(dayBoundary(since), (day) =>
          orUnavailable(
            sql`SELECT COALESCE(SUM(spent_cents), 0)::bigint AS total FROM agent_spend_days
                WHERE agent_id = ${agentId} AND day >= ${day}::date`
          ).pipe(Effect.flatMap(total))
        ),
      spendDrift: orUnavailable(
        Effect.gen(function* () {
          const spend = yield* sql.unsafe(SPEND_DRIFT).pipe(Effect.flatMap(decodeRows(SpendDriftRow)))
          const usage = yield* sql.unsafe(USAGE_DRIFT).pipe(Effect.flatMap(decodeRows(UsageDriftRow)))
          return [...spend.map((r) => ({ ...r, serviceId: null, keptCalls: null, recomputedCalls: null })), ...usage]
        })
      ),
      countPendingApprovals: (agentId, now) =>
        orUnavailable(
          sql`SELECT count(*)::int AS n FROM commerce_approvals
              WHERE agent_id = ${agentId} AND status = 'pending' AND expires_at > ${now}`
        ).pipe(
          Effect.flatMap(decodeFirst(CountRow)),
          Effect.map((r) => r?.n ?? 0)
        ),
      insertRecharge: (r) =>
        orUnavailable(
          sql`INSERT INTO commerce_recharges (id, agent_id, amount_cents, reason, status, ledger_entry_id, created_at)
              VALUES (${r.id}, ${r.agentId}, ${r.amountCents}, ${r.reason}, ${r.status}, ${r.ledgerEntryId},
                ${r.createdAt})`
        ).pipe(Effect.asVoid),
      listRequestedRecharges: (limit) =>
        orUnavailable(
          sql`SELECT id, agent_id, amount_cents, reason, status, ledger_entry_id, created_at FROM commerce_recharges
              WHERE status = 'requested' ORDER BY created_at LIMIT ${limit}`
        ).pipe(Effect.flatMap(decodeRows(RechargeRow)))
    }
  })
)
