// Credits kept apart from the locked balance rows, so that no row is written by every purchase.
// An account's balance is its `ledger_balances` row plus its rows here (at most CREDIT_SHARDS per
// account). Debits of a constrained account lock and move the `ledger_balances` row, after a check
// against the whole balance; every other posting (a credit, or a movement of an `external:`
// account) is added to one of the account's shard rows here, chosen by the entry. A seller's wallet
// and `platform:fees`, credited by every purchase, are then spread over several rows that are held
// only from the settlement's one statement to commit, and never locked by a debit.
//
// The base row may now go below zero while its credits cover it, so its CHECK moves to the sum:
// `Ledger.prepare` checks the whole balance under the lock, and the ledger check (`npm run check`,
// the fault tests) reports any constrained account whose sum is negative. `ledger_account_balances`
// is the view of whole balances, for tools and tests.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ledger_balance_credits (
      account text NOT NULL,
      shard smallint NOT NULL,
      amount bigint NOT NULL,
      PRIMARY KEY (account, shard)
    )`
  yield* sql`ALTER TABLE ledger_balances DROP CONSTRAINT ledger_balance_non_negative`
  yield* sql`
    CREATE VIEW ledger_account_balances AS
      SELECT account, SUM(balance)::bigint AS balance FROM (
        SELECT account, balance FROM ledger_balances
        UNION ALL
        SELECT account, amount FROM ledger_balance_credits
      ) parts GROUP BY account`
})
