// An agent may withdraw the purchase it asked its owner to approve while it still waits (issue 50,
// A2A CancelTask of a task waiting on the owner): the approval's status gains `withdrawn`
// (docs/commerce.md "Approvals").
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE commerce_approvals DROP CONSTRAINT IF EXISTS commerce_approvals_status_check`
  yield* sql`ALTER TABLE commerce_approvals ADD CONSTRAINT commerce_approvals_status_check
    CHECK (status IN ('pending', 'approved', 'declined', 'expired', 'void', 'withdrawn'))`
})
