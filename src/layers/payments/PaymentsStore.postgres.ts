// Postgres PaymentsStore: checkouts, processed processor events, knowledge access, acquisitions.
import { SqlClient, type SqlError } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import {
  Acquisition,
  CheckoutMode,
  CheckoutPurpose,
  type CheckoutRecord,
  CheckoutStatus,
  KnowledgeAccess
} from "../../schema/payments/payments.js"
import { PaymentsStore } from "../../services/payments/PaymentsStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeRows, first, IsoTimestamp } from "./columns.js"

const CheckoutRow = Schema.Struct({
  sessionId: Schema.String,
  purpose: CheckoutPurpose,
  mode: CheckoutMode,
  status: CheckoutStatus,
  amountCents: Schema.Number,
  currency: Schema.String,
  description: Schema.String,
  checkoutUrl: Schema.String,
  accountId: Schema.NullOr(Schema.String),
  agentId: Schema.NullOr(Schema.String),
  planId: Schema.NullOr(Schema.String),
  productId: Schema.NullOr(Schema.Number),
  acquisitionId: Schema.NullOr(Schema.String),
  credits: Schema.Number,
  customerEmail: Schema.NullOr(Schema.String),
  customerName: Schema.NullOr(Schema.String),
  subscriptionId: Schema.NullOr(Schema.String),
  failureReason: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  completedAt: Schema.NullOr(IsoTimestamp)
})
const checkouts = decodeRows(CheckoutRow)

const AccessRow = Schema.Struct({
  id: Schema.String,
  productId: Schema.Number,
  customerEmail: Schema.String,
  customerName: Schema.String,
  checkoutSessionId: Schema.String,
  grantedAt: IsoTimestamp
})
const accesses = decodeRows(AccessRow)

const AcquisitionRow = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  accountId: Schema.String,
  projectId: Schema.String,
  title: Schema.String,
  priceCents: Acquisition.fields.priceCents,
  currency: Schema.String,
  status: CheckoutStatus,
  checkoutSessionId: Schema.String,
  checkoutUrl: Schema.String,
  createdAt: IsoTimestamp,
  paidAt: Schema.NullOr(IsoTimestamp)
})
const acquisitionRows = decodeRows(AcquisitionRow)
const acquisitions = <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E | SqlError.SqlError, R>) =>
  Effect.map(acquisitionRows(statement), (rows) => rows.map((r) => Acquisition.make(r)))

const CHECKOUT_COLUMNS = `session_id, purpose, mode, status, amount_cents, currency, description, checkout_url,
  account_id, agent_id, plan_id, product_id, acquisition_id, credits, customer_email, customer_name, subscription_id,
  failure_reason, created_at, completed_at`

const ACQUISITION_COLUMNS = `id, agent_id, account_id, project_id, title, price_cents, currency, status,
  checkout_session_id, checkout_url, created_at, paid_at`

/**
 * An agent's acquisitions newest first from the cursor's: walks (agent_id, seq DESC) and stops at
 * the page (test/suites/pages.test.ts runs EXPLAIN on this very statement).
 */
export const acquisitionsPage = (
  sql: SqlClient.SqlClient,
  agentId: string,
  page: { readonly limit: number; readonly beforeId?: string | undefined }
) => {
  const after =
    page.beforeId === undefined
      ? sql``
      : sql` AND seq < (SELECT seq FROM acquisitions WHERE id = ${page.beforeId} AND agent_id = ${agentId})`
  return sql`SELECT ${sql.literal(ACQUISITION_COLUMNS)} FROM acquisitions WHERE agent_id = ${agentId}${after}
    ORDER BY seq DESC LIMIT ${page.limit}`
}

/** The agent's paid acquisition of a project: one row of the partial (agent_id, project_id) index. */
export const paidAcquisition = (sql: SqlClient.SqlClient, agentId: string, projectId: string) =>
  sql`SELECT ${sql.literal(ACQUISITION_COLUMNS)} FROM acquisitions
    WHERE agent_id = ${agentId} AND project_id = ${projectId} AND status = 'paid' LIMIT 1`

export const PgPaymentsStore = Layer.effect(
  PaymentsStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(CHECKOUT_COLUMNS)
    const getCheckout = (id: string) =>
      checkouts(sql`SELECT ${cols} FROM checkouts WHERE session_id = ${id}`).pipe(Effect.map(first))
    return PaymentsStore.of({
      insertCheckout: (c) =>
        orUnavailable(
          sql`INSERT INTO checkouts (${cols}) VALUES (
              ${c.sessionId}, ${c.purpose}, ${c.mode}, ${c.status}, ${c.amountCents}, ${c.currency}, ${c.description},
              ${c.checkoutUrl}, ${c.accountId}, ${c.agentId}, ${c.planId}, ${c.productId}, ${c.acquisitionId},
              ${c.credits}, ${c.customerEmail}, ${c.customerName}, ${c.subscriptionId}, ${c.failureReason},
              ${c.createdAt}, ${c.completedAt})
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
        checkouts(sql`SELECT ${cols} FROM checkouts WHERE session_id = ${id} FOR UPDATE`).pipe(Effect.map(first)),
      updateCheckout: (c) =>
        orUnavailable(
          sql`UPDATE checkouts SET status = ${c.status}, subscription_id = ${c.subscriptionId},
                failure_reason = ${c.failureReason}, completed_at = ${c.completedAt} WHERE session_id = ${c.sessionId}`
        ).pipe(Effect.asVoid),
      findCheckoutBySubscription: (subscriptionId) =>
        checkouts(
          sql`SELECT ${cols} FROM checkouts WHERE subscription_id = ${subscriptionId} ORDER BY created_at DESC LIMIT 1`
        ).pipe(Effect.map(first)),
      recordEvent: (e) =>
        orUnavailable(
          sql`INSERT INTO processor_events (id, type, received_at) VALUES (${e.id}, ${e.type}, ${e.receivedAt})
            ON CONFLICT (id) DO NOTHING RETURNING id`
        ).pipe(Effect.map((rows) => rows.length > 0)),
      setEventOutcome: (id, outcome) =>
        orUnavailable(sql`UPDATE processor_events SET outcome = ${outcome} WHERE id = ${id}`).pipe(Effect.asVoid),
      insertAccess: (a) =>
        orUnavailable(
          sql`INSERT INTO knowledge_access
                (id, product_id, customer_email, customer_name, checkout_session_id, granted_at)
              VALUES (${a.id}, ${a.productId}, ${a.customerEmail}, ${a.customerName}, ${a.checkoutSessionId},
                ${a.grantedAt})`
        ).pipe(Effect.asVoid),
      getAccessBySession: (sessionId) =>
        accesses(sql`SELECT * FROM knowledge_access WHERE checkout_session_id = ${sessionId}`).pipe(
          Effect.map((rows) => (rows[0] ? KnowledgeAccess.make(rows[0]) : undefined))
        ),
      insertAcquisition: (a) =>
        orUnavailable(
          sql`INSERT INTO acquisitions (id, agent_id, account_id, project_id, title, price_cents, currency, status,
                checkout_session_id, checkout_url, created_at, paid_at)
              VALUES (${a.id}, ${a.agentId}, ${a.accountId}, ${a.projectId}, ${a.title}, ${a.priceCents}, ${a.currency},
                ${a.status}, ${a.checkoutSessionId}, ${a.checkoutUrl}, ${a.createdAt}, ${a.paidAt})`
        ).pipe(Effect.asVoid),
      updateAcquisition: (a) =>
        orUnavailable(sql`UPDATE acquisitions SET status = ${a.status}, paid_at = ${a.paidAt} WHERE id = ${a.id}`).pipe(
          Effect.asVoid
        ),
      getAcquisition: (id) =>
        acquisitions(sql`SELECT ${sql.literal(ACQUISITION_COLUMNS)} FROM acquisitions WHERE id = ${id}`).pipe(
          Effect.map(first)
        ),
      listAcquisitions: (agentId, page) => acquisitions(acquisitionsPage(sql, agentId, page)),
      findPaidAcquisition: (agentId, projectId) =>
        acquisitions(paidAcquisition(sql, agentId, projectId)).pipe(Effect.map(first))
    })
  })
)
