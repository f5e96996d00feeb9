// Postgres SellerBoardStore. The totals are one statement: the pending orders' count and the
// seller's share of them (orders_seller_idx: only what waits), today's and the month's earnings from
// the seller's day rows (migration 0034: at most 31 days × 16 shards), the all-time share from the
// agent's counter rows (at most 16). The ended orders are three probes of orders_seller_idx, one
// per ended status, newest first, merged and cut to the limit.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { PLATFORM_FEE_PERCENT } from "../../schema/ledger/ledger.js"
import { OrderMode, OrderStatus } from "../../schema/orders/orders.js"
import { utcDay } from "../../schema/wallet/policy.js"
import { type BoardOrder, SellerBoardStore } from "../../services/purchases/SellerBoardStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

const TotalsRow = Schema.Struct({
  pendingCount: Schema.Number,
  held: Schema.Number,
  today: Schema.Number,
  month: Schema.Number,
  allTime: Schema.Number
})

const EndedRow = Schema.Struct({
  id: Schema.String,
  serviceId: Schema.String,
  serviceName: Schema.String,
  tierId: Schema.String,
  priceCents: Schema.Number,
  buyerAgentId: Schema.String,
  mode: OrderMode,
  status: OrderStatus,
  createdAt: IsoTimestamp,
  deadlineAt: IsoTimestamp,
  answeredAt: IsoTimestampOrNull,
  error: Schema.NullOr(Schema.String),
  pushAttempts: Schema.NullOr(Schema.Number),
  pushNextAttemptAt: IsoTimestampOrNull,
  pushAcceptedAt: IsoTimestampOrNull,
  pushLastError: Schema.NullOr(Schema.String)
})

const toBoardOrder = ({
  pushAttempts,
  pushNextAttemptAt,
  pushAcceptedAt,
  pushLastError,
  ...r
}: typeof EndedRow.Type): BoardOrder => ({
  ...r,
  push:
    pushAttempts === null
      ? null
      : {
          attempts: pushAttempts,
          nextAttemptAt: pushNextAttemptAt,
          acceptedAt: pushAcceptedAt,
          lastError: pushLastError
        }
})

const COLUMNS = `id, service_id, service_name, tier_id, price_cents, buyer_agent_id, mode, status, created_at, deadline_at,
  answered_at, error, push_attempts, push_next_attempt_at, push_accepted_at, push_last_error`

export const PgSellerBoardStore = Layer.effect(
  SellerBoardStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)
    const totalsRow = decodeFirst(TotalsRow)
    const endedRows = decodeRows(EndedRow)
    const probe = (sellerAgentId: string, status: string, limit: number) =>
      sql`(SELECT ${columns} FROM orders WHERE seller_agent_id = ${sellerAgentId} AND status = ${status}
        ORDER BY created_at DESC, id DESC LIMIT ${limit})`
    return SellerBoardStore.of({
      totals: (sellerAgentId, at) =>
        orUnavailable(sql`
          SELECT p.pending_count, p.held, m.today, m.month,
            (SELECT COALESCE(SUM(c.earned_cents), 0) FROM agent_counters c WHERE c.agent_id = ${sellerAgentId})::bigint AS all_time
          FROM (
            -- The seller's share of each price as splitSettlement makes it: the fee rounded half up.
            SELECT count(*)::int AS pending_count,
              COALESCE(SUM(o.price_cents - (o.price_cents * ${PLATFORM_FEE_PERCENT}::bigint + 50) / 100), 0)::bigint AS held
            FROM orders o WHERE o.seller_agent_id = ${sellerAgentId} AND o.status = 'pending'
          ) p, (
            ${
              at === undefined
                ? sql`SELECT 0::bigint AS today, 0::bigint AS month`
                : sql`SELECT COALESCE(SUM(e.earned_cents) FILTER (WHERE e.day >= ${utcDay(at.dayStart)}::date), 0)::bigint AS today,
                    COALESCE(SUM(e.earned_cents), 0)::bigint AS month
                  FROM seller_earning_days e
                  WHERE e.agent_id = ${sellerAgentId} AND e.day >= ${utcDay(at.monthStart)}::date
                    AND e.day <= ${utcDay(at.dayStart)}::date`
            }
          ) m`).pipe(
          Effect.flatMap(totalsRow),
          Effect.map((r) => ({
            pendingCount: r?.pendingCount ?? 0,
            heldCents: r?.held ?? 0,
            todayCents: r?.today ?? 0,
            thisMonthCents: r?.month ?? 0,
            allTimeCents: r?.allTime ?? 0
          }))
        ),
      ended: (sellerAgentId, limit) =>
        orUnavailable(sql`
          SELECT * FROM (
            ${probe(sellerAgentId, "delivered", limit)} UNION ALL ${probe(sellerAgentId, "failed", limit)}
            UNION ALL ${probe(sellerAgentId, "expired", limit)} UNION ALL ${probe(sellerAgentId, "cancelled", limit)}
          ) e
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`).pipe(
          Effect.flatMap(endedRows),
          Effect.map((rows) => rows.map(toBoardOrder))
        )
    })
  })
)
