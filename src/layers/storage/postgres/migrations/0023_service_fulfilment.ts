// How each service's orders reach its seller: pull (the default, also for services published
// before fulfilment existed: their sellers never delivered, now they answer their orders), push
// (the seller's endpoint and the secret that signs the pushes) or simulated (the platform's own
// seeded sellers only, which the seed also sets at every start).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE commerce_services
    ADD COLUMN fulfilment_mode text NOT NULL DEFAULT 'pull'
      CHECK (fulfilment_mode IN ('pull', 'push', 'simulated')),
    ADD COLUMN fulfilment_url text,
    ADD COLUMN fulfilment_secret text,
    ADD CONSTRAINT commerce_services_push_endpoint
      CHECK ((fulfilment_mode = 'push') = (fulfilment_url IS NOT NULL AND fulfilment_secret IS NOT NULL))`
  yield* sql`UPDATE commerce_services SET fulfilment_mode = 'simulated'
    WHERE seller_agent_id IN (SELECT id FROM agents WHERE account_id = 'acct_platform_sellers')`
})
