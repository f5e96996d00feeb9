// Postgres store for purchase sagas (claimed by workers with FOR UPDATE SKIP LOCKED and a lease).
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import type { SagaRecord, SagaSnapshot, SagaStatus, SagaStep, SagaStepName } from "../../schema/saga/saga.js"
import { SagaStore } from "../../services/saga/SagaStore.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"

interface SagaRow {
  id: string
  buyerAgentId: string
  accountId: string
  sellerAgentId: string
  serviceId: string
  tierId: string
  input: unknown
  negotiationId: string | null
  priceCents: number | null
  snapshot: SagaSnapshot | null
  transactionId: string | null
  status: SagaStatus
  steps: ReadonlyArray<SagaStep>
  failure: { step: SagaStepName; reason: string } | null
  output: unknown
  nextRunAt: Date | null
  deliverDueAt: Date | null
  createdAt: Date
  updatedAt: Date
  finishedAt: Date | null
}

const toSaga = (r: SagaRow): SagaRecord => ({
  id: r.id,
  buyerAgentId: r.buyerAgentId,
  accountId: r.accountId,
  sellerAgentId: r.sellerAgentId,
  serviceId: r.serviceId,
  tierId: r.tierId,
  input: r.input,
  negotiationId: r.negotiationId,
  priceCents: r.priceCents,
  snapshot: r.snapshot,
  transactionId: r.transactionId,
  status: r.status,
  steps: r.steps,
  failure: r.failure,
  output: r.output,
  nextRunAt: isoOrNull(r.nextRunAt),
  deliverDueAt: isoOrNull(r.deliverDueAt),
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
  finishedAt: isoOrNull(r.finishedAt)
})

/** jsonb parameter (null stays SQL NULL). */
const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v))

export const PgSagaStore = Layer.effect(
  SagaStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<SagaRow>) => (rows[0] ? toSaga(rows[0]) : undefined)
    return {
      insert: (r) =>
        orUnavailable(sql`
          INSERT INTO sagas (id, buyer_agent_id, account_id, seller_agent_id, service_id, tier_id, input, negotiation_id, price_cents, snapshot,
            transaction_id, status, steps, failure, output, next_run_at, deliver_due_at, created_at, updated_at, finished_at)
          VALUES (${r.id}, ${r.buyerAgentId}, ${r.accountId}, ${r.sellerAgentId}, ${r.serviceId}, ${r.tierId}, ${json(r.input)}::jsonb,
            ${r.negotiationId}, ${r.priceCents}, ${json(r.snapshot)}::jsonb, ${r.transactionId}, ${r.status}, ${JSON.stringify(r.steps)}::jsonb, ${json(r.failure)}::jsonb, ${json(r.output)}::jsonb,
            ${r.nextRunAt}, ${r.deliverDueAt}, ${r.createdAt}, ${r.updatedAt}, ${r.finishedAt})`).pipe(Effect.asVoid),
      get: (id) => orUnavailable(sql<SagaRow>`SELECT * FROM sagas WHERE id = ${id}`).pipe(Effect.map(one)),
      getForUpdate: (id) => orUnavailable(sql<SagaRow>`SELECT * FROM sagas WHERE id = ${id} FOR UPDATE`).pipe(Effect.map(one)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE sagas SET price_cents = ${r.priceCents}, snapshot = ${json(r.snapshot)}::jsonb, transaction_id = ${r.transactionId}, status = ${r.status}, steps = ${JSON.stringify(r.steps)}::jsonb,
            failure = ${json(r.failure)}::jsonb, output = ${json(r.output)}::jsonb, next_run_at = ${r.nextRunAt},
            deliver_due_at = ${r.deliverDueAt}, updated_at = ${r.updatedAt}, finished_at = ${r.finishedAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      claimDue: (now, leaseUntil, limit) =>
        orUnavailable(sql<{ id: string }>`
          WITH due AS (
            SELECT id FROM sagas WHERE next_run_at IS NOT NULL AND next_run_at <= ${now}::timestamptz
            ORDER BY next_run_at, id COLLATE "C" LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE sagas s SET next_run_at = ${leaseUntil}::timestamptz FROM due WHERE s.id = due.id
          RETURNING s.id`).pipe(Effect.map((rows) => rows.map((r) => r.id)))
    }
  })
)
