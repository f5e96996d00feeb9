// Postgres store of x402 payments (migrations 0038, 0041). Rows are decoded with the row schema below; the
// claim is one INSERT … ON CONFLICT DO NOTHING, then the row that holds either name when it lost.
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { PaymentPayload, PaymentStatus, SettleResponse, type PaymentRecord } from "../../schema/x402/x402.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { X402Store } from "../../services/x402/X402Store.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst, decodeRows, IsoTimestamp } from "../storage/postgres/rows.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

const PaymentRow = Schema.Struct({
  id: Schema.String,
  paymentKey: Schema.String,
  payer: Schema.String,
  network: Schema.String,
  asset: Schema.String,
  nonce: Schema.String,
  fingerprint: Schema.String,
  amountUnits: Schema.String,
  amountCents: Schema.Number,
  validBefore: Schema.Number,
  serviceId: Schema.String,
  tierId: Schema.String,
  input: Schema.Unknown,
  buyerAgentId: Schema.String,
  buyerAccountId: Schema.String,
  keyed: Schema.Boolean,
  status: PaymentStatus,
  payload: PaymentPayload,
  settleTransaction: Schema.NullOr(Schema.String),
  refundTransaction: Schema.NullOr(Schema.String),
  refundAttempt: Schema.NullOr(
    Schema.Struct({
      transaction: Schema.String,
      nonce: Schema.Number,
      raw: Schema.String,
      replaces: Schema.optional(Schema.Array(Schema.String)),
      signedAt: Schema.optional(Schema.String)
    })
  ),
  transactionId: Schema.NullOr(Schema.String),
  answer: Schema.NullOr(Schema.Struct({ status: Schema.Number, body: Schema.Unknown, settle: SettleResponse })),
  token: Schema.String,
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})

const first = decodeFirst(PaymentRow)
const all = decodeRows(PaymentRow)

export const PgX402Store = Layer.effect(
  X402Store,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const existing = (r: PaymentRecord) =>
      orUnavailable(sql`
        SELECT * FROM x402_payments
        WHERE (payer = ${r.payer} AND payment_key = ${r.paymentKey})
           OR (network = ${r.network} AND asset = ${r.asset} AND payer = ${r.payer} AND nonce = ${r.nonce})
        ORDER BY created_at LIMIT 1`).pipe(Effect.flatMap(first))
    return X402Store.of({
      claim: (r) =>
        orUnavailable(sql`
          INSERT INTO x402_payments (id, payment_key, payer, network, asset, nonce, fingerprint, amount_units,
            amount_cents, valid_before, service_id, tier_id, input, buyer_agent_id, buyer_account_id, keyed, status,
            payload, settle_transaction, refund_transaction, refund_attempt, transaction_id, answer, token, created_at, updated_at)
          VALUES (${r.id}, ${r.paymentKey}, ${r.payer}, ${r.network}, ${r.asset}, ${r.nonce}, ${r.fingerprint},
            ${r.amountUnits}, ${r.amountCents}, ${r.validBefore}, ${r.serviceId}, ${r.tierId}, ${json(r.input)}::jsonb,
            ${r.buyerAgentId}, ${r.buyerAccountId}, ${r.keyed}, ${r.status}, ${json(r.payload)}::jsonb,
            ${r.settleTransaction}, ${r.refundTransaction}, ${json(r.refundAttempt)}::jsonb, ${r.transactionId}, ${json(r.answer)}::jsonb, ${r.token},
            ${r.createdAt}, ${r.updatedAt})
          ON CONFLICT DO NOTHING
          RETURNING id`).pipe(
          Effect.flatMap(
            (
              rows
            ): Effect.Effect<
              { readonly _tag: "Claimed" } | { readonly _tag: "Exists"; readonly existing: PaymentRecord },
              StorageUnavailable
            > =>
              rows.length > 0
                ? Effect.succeed({ _tag: "Claimed" as const })
                : Effect.flatMap(existing(r), (found) =>
                    found === undefined
                      ? Effect.die(new Error(`x402 payment ${r.id} neither inserted nor found`))
                      : Effect.succeed({ _tag: "Exists" as const, existing: found })
                  )
          )
        ),
      get: (id) => orUnavailable(sql`SELECT * FROM x402_payments WHERE id = ${id}`).pipe(Effect.flatMap(first)),
      byAuthorization: (network, asset, payer, nonce) =>
        orUnavailable(
          sql`SELECT * FROM x402_payments WHERE network = ${network} AND asset = ${asset.toLowerCase()}
            AND payer = ${payer} AND nonce = ${nonce.toLowerCase()}`
        ).pipe(Effect.flatMap(first)),
      getForUpdate: (id) =>
        orUnavailable(sql`SELECT * FROM x402_payments WHERE id = ${id} FOR UPDATE`).pipe(Effect.flatMap(first)),
      update: (r) =>
        orUnavailable(sql`
          UPDATE x402_payments SET status = ${r.status}, settle_transaction = ${r.settleTransaction},
            refund_transaction = ${r.refundTransaction}, refund_attempt = ${json(r.refundAttempt)}::jsonb,
            transaction_id = ${r.transactionId},
            answer = ${json(r.answer)}::jsonb, updated_at = ${r.updatedAt}
          WHERE id = ${r.id}`).pipe(Effect.asVoid),
      remove: (id) => orUnavailable(sql`DELETE FROM x402_payments WHERE id = ${id}`).pipe(Effect.asVoid),
      inStatus: (statuses, limit) =>
        orUnavailable(sql`
          SELECT * FROM x402_payments WHERE status IN ${sql.in(statuses)}
          ORDER BY created_at, id LIMIT ${limit}`).pipe(Effect.flatMap(all)),
      page: (afterId, limit) =>
        orUnavailable(
          afterId === null
            ? sql`SELECT * FROM x402_payments ORDER BY id LIMIT ${limit}`
            : sql`SELECT * FROM x402_payments WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`
        ).pipe(Effect.flatMap(all))
    })
  })
)
