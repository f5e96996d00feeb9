// Postgres store for MPP payment challenges.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import type { ChallengeRecord, ChallengeStatus } from "../../schema/mpp/challenge.js"
import { MppStore } from "../../services/mpp/MppStore.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"

interface ChallengeRow {
  id: string
  agentId: string
  keyId: string
  serviceId: string
  tierId: string
  sellerAgentId: string
  amountCents: number
  request: string
  digest: string
  status: ChallengeStatus
  expiresAt: Date
  createdAt: Date
  paidAt: Date | null
  entryId: string | null
  transactionId: string | null
}

const toChallenge = (r: ChallengeRow): ChallengeRecord => ({
  id: r.id,
  agentId: r.agentId,
  keyId: r.keyId,
  serviceId: r.serviceId,
  tierId: r.tierId,
  sellerAgentId: r.sellerAgentId,
  amountCents: r.amountCents,
  request: r.request,
  digest: r.digest,
  status: r.status,
  expiresAt: iso(r.expiresAt),
  createdAt: iso(r.createdAt),
  paidAt: isoOrNull(r.paidAt),
  entryId: r.entryId,
  transactionId: r.transactionId
})

export const PgMppStore = Layer.effect(
  MppStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO mpp_challenges (id, agent_id, key_id, service_id, tier_id, seller_agent_id, amount_cents, request, digest, status,
            expires_at, created_at, paid_at, entry_id, transaction_id)
          VALUES (${r.id}, ${r.agentId}, ${r.keyId}, ${r.serviceId}, ${r.tierId}, ${r.sellerAgentId}, ${r.amountCents}, ${r.request}, ${r.digest},
            ${r.status}, ${r.expiresAt}, ${r.createdAt}, ${r.paidAt}, ${r.entryId}, ${r.transactionId})`).pipe(Effect.asVoid),
      getForUpdate: (id) =>
        orUnavailable(sql<ChallengeRow>`SELECT * FROM mpp_challenges WHERE id = ${id} FOR UPDATE`).pipe(Effect.map((rows) => (rows[0] ? toChallenge(rows[0]) : undefined))),
      update: (r) =>
        orUnavailable(sql`
          UPDATE mpp_challenges SET status = ${r.status}, paid_at = ${r.paidAt}, entry_id = ${r.entryId}, transaction_id = ${r.transactionId} WHERE id = ${r.id}`).pipe(Effect.asVoid),
      pruneOpen: (agentId, nowIso, keep) =>
        orUnavailable(sql`
          DELETE FROM mpp_challenges WHERE agent_id = ${agentId} AND status = 'open' AND (expires_at <= ${nowIso} OR id IN (
            SELECT id FROM mpp_challenges WHERE agent_id = ${agentId} AND status = 'open'
            ORDER BY created_at DESC, id DESC OFFSET ${keep}))`).pipe(Effect.asVoid),
      recentPaid: (limit) =>
        orUnavailable(sql<ChallengeRow>`SELECT * FROM mpp_challenges WHERE status = 'paid' ORDER BY paid_at DESC, id LIMIT ${limit}`).pipe(
          Effect.map((rows) => rows.map(toChallenge))
        ),
      ping: orUnavailable(sql`SELECT 1`).pipe(Effect.asVoid)
    }
  })
)
