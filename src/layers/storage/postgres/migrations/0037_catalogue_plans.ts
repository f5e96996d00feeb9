// The catalogue's pages keep their plan while the catalogue grows faster than its statistics (issue
// 51): a burst of publishing leaves the planner with row counts it extrapolates but column
// statistics from a catalogue a twentieth the size (Postgres analyzes a minute later at the
// earliest, the embedded store has no autovacuum at all). Each read gets an index whose plan wins
// with any statistics: test/suites/catalogue-growth.test.ts EXPLAINs them on a grown table.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The first page walks exactly the listed services in id order. Walking the primary key with
  // `status` as a filter is cheap only when the planner knows most services are listed: without
  // statistics it takes `status = 'active'` for 0.5 % of the rows and sorted a bitmap of the whole
  // catalogue for a page of 20 (343 ms at 20,000 services on the embedded store, 0.15 ms here).
  yield* sql`CREATE INDEX commerce_services_active_id_idx ON commerce_services (id) WHERE status = 'active'`
  // Every catalogue read is of listed services, served in id order by (category, id) and
  // (seller_agent_id, id) WHERE status = 'active' (migration 0018). These two over every row only
  // offered the planner an unordered alternative: with statistics from a 12-service catalogue it
  // took (category) and sorted all 2,500 services of the category for a page (52 ms at 20,000).
  yield* sql`DROP INDEX commerce_services_category_idx`
  yield* sql`DROP INDEX commerce_services_seller_idx`
  // The trigram index's pending list kept to 256 kB (32 pages) instead of 4 MB: new entries wait
  // there, unsorted, until the list is merged into the index, and every `q` reads the whole list.
  // After a burst it held thousands of services (a word in no service read 277 pages at 20,000
  // services, and the planner, pricing the list, scanned the table instead). Merged every few
  // hundred services, bulk inserts stay about as fast (30,000 services on the embedded store:
  // 5.6 s against 5.0 s with 4 MB; 7.4 s at 64 kB; 3× slower with no list at all).
  const trgm = yield* sql`SELECT 1 FROM pg_indexes WHERE indexname = 'commerce_services_search_trgm_idx'`
  if (trgm.length > 0) {
    yield* sql`SELECT gin_clean_pending_list('commerce_services_search_trgm_idx'::regclass)`
    yield* sql`ALTER INDEX commerce_services_search_trgm_idx SET (gin_pending_list_limit = 256)`
  }
})
