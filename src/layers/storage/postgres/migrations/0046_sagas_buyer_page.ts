// An agent's sagas newest first (A2A ListTasks lists them among its tasks, docs/a2a.md): a keyset
// page by (buyer_agent_id, created_at, id) with ids in byte order (COLLATE "C", as the memory store
// sorts them), which sagas_buyer_idx (the database's collation, read by no query) could not serve:
// it is replaced. And which of an agent's transactions are its sagas' purchases (a saga is listed
// once, as the saga): by transaction_id, the rows that have one.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX IF EXISTS sagas_buyer_idx`
  yield* sql`CREATE INDEX IF NOT EXISTS sagas_buyer_page_idx
    ON sagas (buyer_agent_id, created_at DESC, id COLLATE "C" DESC)`
  yield* sql`CREATE INDEX IF NOT EXISTS sagas_transaction_idx ON sagas (transaction_id) WHERE transaction_id IS NOT NULL`
})
