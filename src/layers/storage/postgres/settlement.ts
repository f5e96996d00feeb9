// Postgres settlement writer: a settled purchase (ledger entry, postings and balances, transaction,
// delivery, the buyer's running totals, events) in one statement.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { SettlementStore } from "../../../services/Settlement.js"
import { transactionCtes } from "./commerce.js"
import { eventsCte } from "./events.js"
import { entryCtes } from "./ledger.js"
import { orUnavailable } from "./PgDb.js"

export const PgSettlementStore = Layer.effect(
  SettlementStore,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    write: ({ entry, tx, delivery, events }) =>
      orUnavailable(
        sql`WITH ${entry !== null ? sql`${entryCtes(sql, entry)}, ` : sql``}${transactionCtes(sql, tx, delivery)}${
          events.length > 0 ? sql`, ${eventsCte(sql, events)}` : sql``
        } SELECT 1`
      ).pipe(Effect.asVoid)
  }))
)
