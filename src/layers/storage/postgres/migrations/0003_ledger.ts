// The double-entry ledger: entries, postings (append-only) and per-account balances.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ledger_entries (
      seq bigserial UNIQUE,
      id text PRIMARY KEY,
      kind text NOT NULL,
      reference text NOT NULL,
      memo text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX ledger_entries_reference_idx ON ledger_entries (reference)`
  yield* sql`
    CREATE TABLE ledger_postings (
      entry_seq bigint NOT NULL REFERENCES ledger_entries(seq),
      account text NOT NULL,
      amount bigint NOT NULL CHECK (amount <> 0),
      PRIMARY KEY (account, entry_seq)
    )`
  yield* sql`
    CREATE TABLE ledger_balances (
      account text PRIMARY KEY,
      balance bigint NOT NULL,
      CONSTRAINT ledger_balance_non_negative CHECK (balance >= 0 OR account LIKE 'external:%')
    )`
})
