// Postgres store for MPP payment challenges. Rows are decoded with the row schema below.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { ChallengeStatus } from "../../schema/mpp/challenge.js"
import { MppStore } from "../../services/mpp/MppStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp, IsoTimestampOrNull } from "../storage/postgres/rows.js"

/** An `mpp_challenges` row as the ChallengeRecord it stores. */
const ChallengeRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  keyId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  sellerAgentId: Schema.String,
  amountCents: Schema.Number,
  request: Schema.String,
  digest: Schema.String,
  status: ChallengeStatus,
  expiresAt: IsoTimestamp,
  createdAt: IsoTimestamp,
  paidAt: IsoTimestampOrNull,
  entryId: Schema.NullOr(Schema.String),
  transactionId: Schema.NullOr(Schema.String)
})

const first = decodeFirst(ChallengeRow)
const all = decodeRows(ChallengeRow)

export const PgMppStore = Layer.effect(
  MppStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO mpp_challenges (id, agent_id, key_id, service_id, tier_id, seller_agent_id, amount_cents, request,
            digest, status, expires_at, created_at, paid_at, entry_id, transaction_id)
          VALUES (${r.id}, ${r.agentId}, ${r.keyId}, ${r.serviceId}, ${r.tierId}, ${r.sellerAgentId}, ${r.amountCents},
            ${r.request}, ${r.digest}, ${r.status}, ${r.expiresAt}, ${r.createdAt}, ${r.paidAt}, ${r.entryId},
            ${r.transactionId})`).pipe(Effect.asVoid),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM mpp_challenges WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(first)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE mpp_challenges SET status = ${r.status}, paid_at = ${r.paidAt}, entry_id = ${r.entryId},
            transaction_id = ${r.transactionId}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      pruneOpen: (agentId, nowIso, keep) =>
        orUnavailable(sql`
          DELETE FROM mpp_challenges WHERE agent_id = ${agentId} AND status = 'open'
            AND (expires_at <= ${nowIso} OR id IN (
            SELECT id FROM mpp_challenges WHERE agent_id = ${agentId} AND status = 'open'
            ORDER BY created_at DESC, id DESC OFFSET ${keep}))`).pipe(Effect.asVoid),
      recentPaid: (limit) =>
        orUnavailable(
          sql`SELECT * FROM mpp_challenges WHERE status = 'paid' ORDER BY paid_at DESC, id LIMIT ${limit}`
        ).pipe(Effect.flatMap(all)),
      ping: orUnavailable(sql`SELECT 1`).pipe(Effect.asVoid)
    }
  })
)
