// Postgres stores for checkouts, processed processor events, knowledge access, acquisitions and
// the fake processor's sessions and signed deliveries.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { cents } from "../../schema/platform/common.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { Acquisition, type CheckoutMode, type CheckoutPurpose, type CheckoutRecord, type CheckoutStatus, KnowledgeAccess } from "../../schema/payments/payments.js"
import { type FakeDelivery, FakeProcessorStore, type FakeSession, PaymentsStore } from "../../services/payments/Payments.js"
import { iso, isoOrNull, orUnavailable } from "../storage/postgres/PgDb.js"

interface CheckoutRow {
  sessionId: string
  purpose: CheckoutPurpose
  mode: CheckoutMode
  status: CheckoutStatus
  amountCents: number
  currency: string
  description: string
  checkoutUrl: string
  accountId: string | null
  agentId: string | null
  planId: string | null
  productId: number | null
  acquisitionId: string | null
  credits: number
  customerEmail: string | null
  customerName: string | null
  subscriptionId: string | null
  failureReason: string | null
  createdAt: Date
  completedAt: Date | null
}
const toCheckout = (r: CheckoutRow): CheckoutRecord => ({ ...r, createdAt: iso(r.createdAt), completedAt: isoOrNull(r.completedAt) })

interface AccessRow { id: string; productId: number; customerEmail: string; customerName: string; checkoutSessionId: string; grantedAt: Date }
const toAccess = (r: AccessRow) => KnowledgeAccess.make({ ...r, grantedAt: iso(r.grantedAt) })

interface AcquisitionRow {
  id: string; agentId: string; accountId: string; projectId: string; title: string; priceCents: number; currency: string
  status: CheckoutStatus; checkoutSessionId: string; checkoutUrl: string; createdAt: Date; paidAt: Date | null
}
const toAcquisition = (r: AcquisitionRow) =>
  Acquisition.make({
    id: r.id,
    agentId: r.agentId,
    accountId: r.accountId,
    projectId: r.projectId,
    title: r.title,
    priceCents: cents(r.priceCents),
    currency: r.currency,
    status: r.status,
    checkoutSessionId: r.checkoutSessionId,
    checkoutUrl: r.checkoutUrl,
    createdAt: iso(r.createdAt),
    paidAt: isoOrNull(r.paidAt)
  })

const CHECKOUT_COLUMNS = `session_id, purpose, mode, status, amount_cents, currency, description, checkout_url, account_id, agent_id,
  plan_id, product_id, acquisition_id, credits, customer_email, customer_name, subscription_id, failure_reason, created_at, completed_at`

const ACQUISITION_COLUMNS = "id, agent_id, account_id, project_id, title, price_cents, currency, status, checkout_session_id, checkout_url, created_at, paid_at"

/** An agent's acquisitions newest first from the cursor's: walks (agent_id, seq DESC) and stops at the page (test/suites/pages.test.ts). */
export const acquisitionsPage = (sql: SqlClient.SqlClient, agentId: string, page: { readonly limit: number; readonly beforeId?: string | undefined }) =>
  sql<AcquisitionRow>`SELECT ${sql.literal(ACQUISITION_COLUMNS)} FROM acquisitions WHERE agent_id = ${agentId}${
    page.beforeId === undefined ? sql`` : sql` AND seq < (SELECT seq FROM acquisitions WHERE id = ${page.beforeId} AND agent_id = ${agentId})`
  } ORDER BY seq DESC LIMIT ${page.limit}`

/** The agent's paid acquisition of a project: one row of the partial (agent_id, project_id) index (migration 0019). */
export const paidAcquisition = (sql: SqlClient.SqlClient, agentId: string, projectId: string) =>
  sql<AcquisitionRow>`SELECT ${sql.literal(ACQUISITION_COLUMNS)} FROM acquisitions WHERE agent_id = ${agentId} AND project_id = ${projectId} AND status = 'paid' LIMIT 1`

export const PgPaymentsStore = Layer.effect(
  PaymentsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(CHECKOUT_COLUMNS)
    const getCheckout = (id: string) =>
      orUnavailable(sql<CheckoutRow>`SELECT ${cols} FROM checkouts WHERE session_id = ${id}`).pipe(Effect.map((r) => (r[0] ? toCheckout(r[0]) : undefined)))
    return {
      insertCheckout: (c) =>
        orUnavailable(
          sql<{ sessionId: string }>`INSERT INTO checkouts (${cols}) VALUES (
              ${c.sessionId}, ${c.purpose}, ${c.mode}, ${c.status}, ${c.amountCents}, ${c.currency}, ${c.description}, ${c.checkoutUrl},
              ${c.accountId}, ${c.agentId}, ${c.planId}, ${c.productId}, ${c.acquisitionId}, ${c.credits}, ${c.customerEmail},
              ${c.customerName}, ${c.subscriptionId}, ${c.failureReason}, ${c.createdAt}, ${c.completedAt})
            ON CONFLICT (session_id) DO NOTHING RETURNING session_id`
        ).pipe(
          Effect.flatMap((rows): Effect.Effect<{ checkout: CheckoutRecord; inserted: boolean }, StorageUnavailable> =>
            rows.length > 0
              ? Effect.succeed({ checkout: c, inserted: true })
              : Effect.map(getCheckout(c.sessionId), (existing) => ({ checkout: existing ?? c, inserted: false }))
          )
        ),
      getCheckout,
      lockCheckout: (id) =>
        orUnavailable(sql<CheckoutRow>`SELECT ${cols} FROM checkouts WHERE session_id = ${id} FOR UPDATE`).pipe(
          Effect.map((r) => (r[0] ? toCheckout(r[0]) : undefined))
        ),
      updateCheckout: (c) =>
        orUnavailable(
          sql`UPDATE checkouts SET status = ${c.status}, subscription_id = ${c.subscriptionId}, failure_reason = ${c.failureReason},
                completed_at = ${c.completedAt} WHERE session_id = ${c.sessionId}`
        ).pipe(Effect.asVoid),
      findCheckoutBySubscription: (subscriptionId) =>
        orUnavailable(
          sql<CheckoutRow>`SELECT ${cols} FROM checkouts WHERE subscription_id = ${subscriptionId} ORDER BY created_at DESC LIMIT 1`
        ).pipe(Effect.map((r) => (r[0] ? toCheckout(r[0]) : undefined))),
      recordEvent: (e) =>
        orUnavailable(
          sql<{ id: string }>`INSERT INTO processor_events (id, type, received_at) VALUES (${e.id}, ${e.type}, ${e.receivedAt})
            ON CONFLICT (id) DO NOTHING RETURNING id`
        ).pipe(Effect.map((rows) => rows.length > 0)),
      setEventOutcome: (id, outcome) => orUnavailable(sql`UPDATE processor_events SET outcome = ${outcome} WHERE id = ${id}`).pipe(Effect.asVoid),
      insertAccess: (a) =>
        orUnavailable(
          sql`INSERT INTO knowledge_access (id, product_id, customer_email, customer_name, checkout_session_id, granted_at)
              VALUES (${a.id}, ${a.productId}, ${a.customerEmail}, ${a.customerName}, ${a.checkoutSessionId}, ${a.grantedAt})`
        ).pipe(Effect.asVoid),
      getAccessBySession: (sessionId) =>
        orUnavailable(sql<AccessRow>`SELECT * FROM knowledge_access WHERE checkout_session_id = ${sessionId}`).pipe(
          Effect.map((r) => (r[0] ? toAccess(r[0]) : undefined))
        ),
      insertAcquisition: (a) =>
        orUnavailable(
          sql`INSERT INTO acquisitions (id, agent_id, account_id, project_id, title, price_cents, currency, status, checkout_session_id,
                checkout_url, created_at, paid_at)
              VALUES (${a.id}, ${a.agentId}, ${a.accountId}, ${a.projectId}, ${a.title}, ${a.priceCents}, ${a.currency}, ${a.status},
                ${a.checkoutSessionId}, ${a.checkoutUrl}, ${a.createdAt}, ${a.paidAt})`
        ).pipe(Effect.asVoid),
      updateAcquisition: (a) =>
        orUnavailable(sql`UPDATE acquisitions SET status = ${a.status}, paid_at = ${a.paidAt} WHERE id = ${a.id}`).pipe(Effect.asVoid),
      getAcquisition: (id) =>
        orUnavailable(
          sql<AcquisitionRow>`SELECT id, agent_id, account_id, project_id, title, price_cents, currency, status, checkout_session_id, checkout_url,
                created_at, paid_at FROM acquisitions WHERE id = ${id}`
        ).pipe(Effect.map((r) => (r[0] ? toAcquisition(r[0]) : undefined))),
      listAcquisitions: (agentId, page) => orUnavailable(acquisitionsPage(sql, agentId, page)).pipe(Effect.map((rows) => rows.map(toAcquisition))),
      findPaidAcquisition: (agentId, projectId) =>
        orUnavailable(paidAcquisition(sql, agentId, projectId)).pipe(Effect.map((r) => (r[0] ? toAcquisition(r[0]) : undefined)))
    }
  })
)

interface FakeSessionRow {
  id: string; mode: CheckoutMode; amountCents: number; currency: string; description: string; successUrl: string; cancelUrl: string
  metadata: Record<string, string>; customerEmail: string | null; idempotencyKey: string; status: FakeSession["status"]
  paymentStatus: FakeSession["paymentStatus"]; failureCode: string | null; subscriptionId: string | null
  createdAt: Date; expiresAt: Date; completedAt: Date | null
}
const toFakeSession = (r: FakeSessionRow): FakeSession => ({
  ...r,
  metadata: { ...r.metadata },
  createdAt: iso(r.createdAt),
  expiresAt: iso(r.expiresAt),
  completedAt: isoOrNull(r.completedAt)
})
interface DeliveryRow { eventId: string; sessionId: string; type: string; payload: string; signatureHeader: string; createdAt: Date }
const toDelivery = (r: DeliveryRow): FakeDelivery => ({ ...r, createdAt: iso(r.createdAt) })

export const PgFakeProcessorStore = Layer.effect(
  FakeProcessorStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const one = (rows: ReadonlyArray<FakeSessionRow>) => (rows[0] ? toFakeSession(rows[0]) : undefined)
    return {
      insertSession: (s) =>
        orUnavailable(
          sql`INSERT INTO fake_checkout_sessions (id, mode, amount_cents, currency, description, success_url, cancel_url, metadata, customer_email,
                idempotency_key, status, payment_status, failure_code, subscription_id, created_at, expires_at, completed_at)
              VALUES (${s.id}, ${s.mode}, ${s.amountCents}, ${s.currency}, ${s.description}, ${s.successUrl}, ${s.cancelUrl},
                ${JSON.stringify(s.metadata)}::jsonb, ${s.customerEmail}, ${s.idempotencyKey}, ${s.status}, ${s.paymentStatus}, ${s.failureCode},
                ${s.subscriptionId}, ${s.createdAt}, ${s.expiresAt}, ${s.completedAt})
              ON CONFLICT (idempotency_key) DO NOTHING`
        ).pipe(Effect.asVoid),
      getSession: (id) => orUnavailable(sql<FakeSessionRow>`SELECT * FROM fake_checkout_sessions WHERE id = ${id}`).pipe(Effect.map(one)),
      lockSession: (id) => orUnavailable(sql<FakeSessionRow>`SELECT * FROM fake_checkout_sessions WHERE id = ${id} FOR UPDATE`).pipe(Effect.map(one)),
      findSessionByIdempotencyKey: (key) =>
        orUnavailable(sql<FakeSessionRow>`SELECT * FROM fake_checkout_sessions WHERE idempotency_key = ${key}`).pipe(Effect.map(one)),
      updateSession: (s) =>
        orUnavailable(
          sql`UPDATE fake_checkout_sessions SET status = ${s.status}, payment_status = ${s.paymentStatus}, failure_code = ${s.failureCode},
                subscription_id = ${s.subscriptionId}, completed_at = ${s.completedAt} WHERE id = ${s.id}`
        ).pipe(Effect.asVoid),
      insertDelivery: (d) =>
        orUnavailable(
          sql`INSERT INTO fake_processor_deliveries (event_id, session_id, type, payload, signature_header, created_at)
              VALUES (${d.eventId}, ${d.sessionId}, ${d.type}, ${d.payload}, ${d.signatureHeader}, ${d.createdAt})`
        ).pipe(Effect.asVoid),
      listDeliveries: (sessionId) =>
        orUnavailable(
          sql<DeliveryRow>`SELECT event_id, session_id, type, payload, signature_header, created_at FROM fake_processor_deliveries
              WHERE session_id = ${sessionId} ORDER BY seq`
        ).pipe(Effect.map((rows) => rows.map(toDelivery)))
    }
  })
)
