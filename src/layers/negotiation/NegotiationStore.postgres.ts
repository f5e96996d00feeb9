// Postgres store for negotiations: the seller's scheduled answer is a due row that any process
// claims with FOR UPDATE SKIP LOCKED, answered in the same transaction. Rows are decoded with the
// row schema below.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { HistoryEntry, NegotiationStatus, Terms } from "../../schema/negotiation/negotiation.js"
import type { NegotiationFilter } from "../../schema/negotiation/query.js"
import { NegotiationStore } from "../../services/negotiation/NegotiationStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

/** A `negotiations` row as the NegotiationRecord it stores. */
const NegotiationRow = Schema.Struct({
  id: Schema.String,
  buyerAgentId: Schema.String,
  sellerAgentId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  listPriceCents: Schema.Number,
  terms: Terms,
  status: NegotiationStatus,
  round: Schema.Number,
  currentPriceCents: Schema.Number,
  sellerAskCents: Schema.NullOr(Schema.Number),
  agreedPriceCents: Schema.NullOr(Schema.Number),
  history: Schema.Array(HistoryEntry),
  sellerDueAt: IsoTimestampOrNull,
  expiresAt: IsoTimestampOrNull,
  usedBy: Schema.NullOr(Schema.String),
  usedAt: IsoTimestampOrNull,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})

const first = decodeFirst(NegotiationRow)
const all = decodeRows(NegotiationRow)

/**
 * The rows in the filter's state as of its `now`: a counter or an agreed price past its expiry reads
 * as expired (effectiveStatus). The status is written as a literal (it comes from a closed set) so
 * that the seller's inbox matches its partial index (migration 0030).
 */
const statusClause = (sql: SqlClient.SqlClient, filter: NegotiationFilter | undefined) => {
  if (filter?.status === undefined) return sql``
  const now = filter.now
  switch (filter.status) {
    case "expired":
      return sql`AND (status = 'expired' OR (status IN ('accepted', 'awaiting_buyer') AND expires_at <= ${now}::timestamptz))`
    case "accepted":
    case "awaiting_buyer":
      return sql`AND status = ${sql.literal(`'${filter.status}'`)} AND (expires_at IS NULL OR expires_at > ${now}::timestamptz)`
    default:
      return sql`AND status = ${sql.literal(`'${filter.status}'`)}`
  }
}

/**
 * An agent's negotiations as buyer or seller, newest first (created_at, id in byte order, as the
 * memory store sorts): each side walks its own (agent, created_at, id COLLATE "C") index from the
 * cursor and stops at the page (migration 0019); an OR read both sides whole and sorted them. A
 * filter's role reads one side only.
 */
export const negotiationsPage = (
  sql: SqlClient.SqlClient,
  agentId: string,
  page: {
    readonly limit: number
    readonly before?: { readonly createdAt: string; readonly id: string } | undefined
    readonly filter?: NegotiationFilter | undefined
  }
) => {
  const after =
    page.before === undefined
      ? sql``
      : sql`AND (created_at, id COLLATE "C") < (${page.before.createdAt}::timestamptz, ${page.before.id} COLLATE "C")`
  const only = statusClause(sql, page.filter)
  const buyerSide = sql`(SELECT * FROM negotiations WHERE buyer_agent_id = ${agentId} ${after} ${only}
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${page.limit})`
  const sellerSide = sql`(SELECT * FROM negotiations WHERE seller_agent_id = ${agentId} AND buyer_agent_id <> ${agentId} ${after} ${only}
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${page.limit})`
  const role = page.filter?.role
  const sides =
    role === "buyer" ? buyerSide : role === "seller" ? sellerSide : sql`${buyerSide} UNION ALL ${sellerSide}`
  return sql`SELECT * FROM (${sides}) n ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${page.limit}`
}

export const PgNegotiationStore = Layer.effect(
  NegotiationStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO negotiations (id, buyer_agent_id, seller_agent_id, service_id, tier_id, list_price_cents, terms,
            status, round, current_price_cents, seller_ask_cents, agreed_price_cents, history, seller_due_at,
            expires_at, used_by, used_at, created_at, updated_at)
          VALUES (${r.id}, ${r.buyerAgentId}, ${r.sellerAgentId}, ${r.serviceId}, ${r.tierId}, ${r.listPriceCents},
            ${JSON.stringify(r.terms)}::jsonb, ${r.status}, ${r.round}, ${r.currentPriceCents}, ${r.sellerAskCents},
            ${r.agreedPriceCents}, ${JSON.stringify(r.history)}::jsonb, ${r.sellerDueAt}, ${r.expiresAt},
            ${r.usedBy}, ${r.usedAt}, ${r.createdAt}, ${r.updatedAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql`SELECT * FROM negotiations WHERE id = ${id}`).pipe(Effect.flatMap(first)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM negotiations WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(first)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE negotiations SET terms = ${JSON.stringify(r.terms)}::jsonb, status = ${r.status}, round = ${r.round},
            current_price_cents = ${r.currentPriceCents}, seller_ask_cents = ${r.sellerAskCents},
            agreed_price_cents = ${r.agreedPriceCents}, history = ${JSON.stringify(r.history)}::jsonb,
            seller_due_at = ${r.sellerDueAt}, expires_at = ${r.expiresAt},
            used_by = ${r.usedBy}, used_at = ${r.usedAt}, updated_at = ${r.updatedAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      listForAgent: (agentId, page) => orUnavailable(negotiationsPage(sql, agentId, page)).pipe(Effect.flatMap(all)),
      claimDue: (now, limit) =>
        orUnavailable(sql`
          SELECT * FROM negotiations WHERE seller_due_at IS NOT NULL AND seller_due_at <= ${now}::timestamptz
          ORDER BY seller_due_at, id COLLATE "C" LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`).pipe(Effect.flatMap(all))
    }
  })
)
