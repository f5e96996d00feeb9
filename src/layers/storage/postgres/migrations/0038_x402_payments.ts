// x402 payments (issue 49, docs/x402.md): one row per payment made with x402 on a paid call. A
// payment has two names, each unique: the payer's key for it (payment-identifier, Idempotency-Key or
// the authorization's nonce) and the EIP-3009 authorization itself (network, asset, payer, nonce),
// so a replayed signature finds the first payment and never settles twice. The open ones (outcome
// unknown, settled with the purchase still running, refund under way) are the reconciliation's
// work list, read through a partial index.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE x402_payments (
      id text PRIMARY KEY,
      payment_key text NOT NULL,
      payer text NOT NULL,
      network text NOT NULL,
      asset text NOT NULL,
      nonce text NOT NULL,
      fingerprint text NOT NULL,
      amount_units text NOT NULL,
      amount_cents bigint NOT NULL CHECK (amount_cents > 0),
      valid_before bigint NOT NULL,
      service_id text NOT NULL,
      tier_id text NOT NULL,
      input jsonb NOT NULL,
      buyer_agent_id text NOT NULL,
      buyer_account_id text NOT NULL,
      keyed boolean NOT NULL,
      status text NOT NULL CHECK (status IN ('settling', 'settlement_pending', 'held', 'settled', 'failed', 'refunding',
        'refunded', 'kept_as_credits')),
      payload jsonb NOT NULL,
      settle_transaction text,
      refund_transaction text,
      transaction_id text,
      answer jsonb,
      token text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX x402_payments_key_idx ON x402_payments (payer, payment_key)`
  yield* sql`CREATE UNIQUE INDEX x402_payments_nonce_idx ON x402_payments (network, asset, payer, nonce)`
  yield* sql`
    CREATE INDEX x402_payments_open_idx ON x402_payments (created_at, id)
    WHERE status IN ('settling', 'settlement_pending', 'held', 'refunding')`
})
