// Postgres FakeProcessorStore: the fake processor's sessions and signed deliveries.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { CheckoutMode } from "../../schema/payments/payments.js"
import { FakeProcessorStore } from "../../services/payments/FakeProcessorStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeRows, first, IsoTimestamp } from "./columns.js"

const SessionRow = Schema.Struct({
  id: Schema.String,
  mode: CheckoutMode,
  amountCents: Schema.Number,
  currency: Schema.String,
  description: Schema.String,
  successUrl: Schema.String,
  cancelUrl: Schema.String,
  metadata: Schema.Record(Schema.String, Schema.String),
  customerEmail: Schema.NullOr(Schema.String),
  idempotencyKey: Schema.String,
  status: Schema.Literals(["open", "complete", "expired"]),
  paymentStatus: Schema.Literals(["paid", "unpaid"]),
  failureCode: Schema.NullOr(Schema.String),
  subscriptionId: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestamp,
  completedAt: Schema.NullOr(IsoTimestamp)
})
const sessions = decodeRows(SessionRow)

const DeliveryRow = Schema.Struct({
  eventId: Schema.String,
  sessionId: Schema.String,
  type: Schema.String,
  payload: Schema.String,
  signatureHeader: Schema.String,
  createdAt: IsoTimestamp
})
const deliveries = decodeRows(DeliveryRow)

export const PgFakeProcessorStore = Layer.effect(
  FakeProcessorStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return FakeProcessorStore.of({
      insertSession: (s) =>
        orUnavailable(
          sql`INSERT INTO fake_checkout_sessions (id, mode, amount_cents, currency, description, success_url,
                cancel_url, metadata, customer_email, idempotency_key, status, payment_status, failure_code,
                subscription_id, created_at, expires_at, completed_at)
              VALUES (${s.id}, ${s.mode}, ${s.amountCents}, ${s.currency}, ${s.description}, ${s.successUrl},
                ${s.cancelUrl}, ${JSON.stringify(s.metadata)}::jsonb, ${s.customerEmail}, ${s.idempotencyKey},
                ${s.status}, ${s.paymentStatus}, ${s.failureCode}, ${s.subscriptionId}, ${s.createdAt}, ${s.expiresAt},
                ${s.completedAt})
              ON CONFLICT (idempotency_key) DO NOTHING`
        ).pipe(Effect.asVoid),
      getSession: (id) => sessions(sql`SELECT * FROM fake_checkout_sessions WHERE id = ${id}`).pipe(Effect.map(first)),
      lockSession: (id) =>
        sessions(sql`SELECT * FROM fake_checkout_sessions WHERE id = ${id} FOR UPDATE`).pipe(Effect.map(first)),
      findSessionByIdempotencyKey: (key) =>
        sessions(sql`SELECT * FROM fake_checkout_sessions WHERE idempotency_key = ${key}`).pipe(Effect.map(first)),
      updateSession: (s) =>
        orUnavailable(
          sql`UPDATE fake_checkout_sessions SET status = ${s.status}, payment_status = ${s.paymentStatus},
                failure_code = ${s.failureCode}, subscription_id = ${s.subscriptionId}, completed_at = ${s.completedAt}
              WHERE id = ${s.id}`
        ).pipe(Effect.asVoid),
      insertDelivery: (d) =>
        orUnavailable(
          sql`INSERT INTO fake_processor_deliveries (event_id, session_id, type, payload, signature_header, created_at)
              VALUES (${d.eventId}, ${d.sessionId}, ${d.type}, ${d.payload}, ${d.signatureHeader}, ${d.createdAt})`
        ).pipe(Effect.asVoid),
      listDeliveries: (sessionId) =>
        deliveries(
          sql`SELECT event_id, session_id, type, payload, signature_header, created_at FROM fake_processor_deliveries
              WHERE session_id = ${sessionId} ORDER BY seq`
        )
    })
  })
)
