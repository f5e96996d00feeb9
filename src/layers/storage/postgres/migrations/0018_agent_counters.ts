// Per-agent running counters, written by the transaction insert and status change, the review
// insert and the dispute update in the same statement (src/schema/reputation/counters.ts says what
// each adds), backfilled here from the history; `npm run check` recomputes and compares them:
// - agent_counters: an agent's purchases, sales, refunds, deals, volume, reviews received and
//   disputes lost (GET /stats, /reputation, the leaderboard, recommendations' seller scores).
//   Up to 16 rows per agent, the shard chosen by the transaction id, summed on read, so the buyers
//   of one seller do not all update one row (as ledger_balance_credits, 0017);
// - agent_service_counts: completed transactions and their price per agent, side and service (top
//   services bought and sold; the platform's top services), sharded the same way;
// - agent_category_counts: completed purchases per buyer and category (recommendations' fit).
// The backfill puts every agent's history in shard 0.
// Also indexes that serve the approvals and disputes pages exactly (filter and order, so neither
// reads an account's or agent's rows whole nor sorts them): (account[, status], created_at, id) and
// (buyer | seller, created_at, id), replacing the narrower ones.
// And the catalogue's: each service's cheapest and dearest tier (a price band "some tier ≥ min" is
// max_tier_cents ≥ min, "some tier ≤ max" is min_tier_cents ≤ max: no unnesting of every row's
// tiers), (category, id) and (seller, id) for the listed services, and a trigram index on the
// search text for `q` (pg_trgm: contrib on Postgres, loaded by src/layers/storage/embedded.ts on
// PGlite; skipped where the server does not offer it, and `q` then walks the id order as before).
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE agent_counters (
    agent_id text NOT NULL,
    shard smallint NOT NULL,
    purchases integer NOT NULL DEFAULT 0,
    spent_cents bigint NOT NULL DEFAULT 0,
    refunds_received_cents bigint NOT NULL DEFAULT 0,
    sales integer NOT NULL DEFAULT 0,
    earned_cents bigint NOT NULL DEFAULT 0,
    fees_generated_cents bigint NOT NULL DEFAULT 0,
    deals integer NOT NULL DEFAULT 0,
    volume_cents bigint NOT NULL DEFAULT 0,
    reviews_received integer NOT NULL DEFAULT 0,
    rating_sum bigint NOT NULL DEFAULT 0,
    disputes_lost integer NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, shard)
  )`
  yield* sql`INSERT INTO agent_counters (agent_id, shard, purchases, spent_cents, refunds_received_cents, sales, earned_cents, fees_generated_cents,
      deals, volume_cents, reviews_received, rating_sum, disputes_lost)
    SELECT agent_id, 0, SUM(purchases), SUM(spent_cents), SUM(refunds_received_cents), SUM(sales), SUM(earned_cents), SUM(fees_generated_cents),
      SUM(deals), SUM(volume_cents), SUM(reviews_received), SUM(rating_sum), SUM(disputes_lost)
    FROM (
      SELECT buyer_agent_id AS agent_id,
        (status = 'completed')::int AS purchases,
        CASE WHEN status = 'completed' THEN price_cents ELSE 0 END AS spent_cents,
        CASE WHEN status = 'refunded' THEN price_cents ELSE 0 END AS refunds_received_cents,
        0 AS sales, 0 AS earned_cents, 0 AS fees_generated_cents,
        (status <> 'failed')::int AS deals,
        CASE WHEN status = 'completed' THEN price_cents ELSE 0 END AS volume_cents,
        0 AS reviews_received, 0 AS rating_sum, 0 AS disputes_lost
      FROM commerce_transactions
      UNION ALL
      SELECT t.seller_agent_id, 0, 0, 0,
        (t.status = 'completed')::int,
        CASE WHEN t.status = 'completed' THEN t.seller_cents ELSE 0 END,
        CASE WHEN t.status = 'completed' THEN t.fee_cents ELSE 0 END,
        (t.status <> 'failed' AND t.seller_agent_id <> t.buyer_agent_id)::int,
        CASE WHEN t.status = 'completed' AND t.seller_agent_id <> t.buyer_agent_id THEN t.price_cents ELSE 0 END,
        (t.status <> 'failed' AND r.id IS NOT NULL)::int,
        CASE WHEN t.status <> 'failed' THEN COALESCE(r.rating, 0) ELSE 0 END,
        0
      FROM commerce_transactions t LEFT JOIN commerce_reviews r ON r.transaction_id = t.id
      UNION ALL
      SELECT seller_agent_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (status = 'resolved_refunded')::int FROM commerce_disputes
      UNION ALL
      SELECT buyer_agent_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (status = 'resolved_rejected')::int FROM commerce_disputes
    ) x
    GROUP BY agent_id`
  yield* sql`CREATE TABLE agent_service_counts (
    agent_id text NOT NULL,
    role text NOT NULL CHECK (role IN ('buyer', 'seller')),
    service_id text NOT NULL,
    shard smallint NOT NULL,
    service_name text NOT NULL,
    count integer NOT NULL,
    volume_cents bigint NOT NULL,
    PRIMARY KEY (agent_id, role, service_id, shard)
  )`
  yield* sql`INSERT INTO agent_service_counts (agent_id, role, service_id, shard, service_name, count, volume_cents)
    SELECT buyer_agent_id, 'buyer', service_id, 0, max(service_name), count(*), SUM(price_cents)
    FROM commerce_transactions WHERE status = 'completed' GROUP BY buyer_agent_id, service_id
    UNION ALL
    SELECT seller_agent_id, 'seller', service_id, 0, max(service_name), count(*), SUM(price_cents)
    FROM commerce_transactions WHERE status = 'completed' GROUP BY seller_agent_id, service_id`
  yield* sql`CREATE TABLE agent_category_counts (
    agent_id text NOT NULL,
    category text NOT NULL,
    purchases integer NOT NULL,
    PRIMARY KEY (agent_id, category)
  )`
  yield* sql`INSERT INTO agent_category_counts (agent_id, category, purchases)
    SELECT buyer_agent_id, category, count(*) FROM commerce_transactions WHERE status = 'completed' GROUP BY 1, 2`
  yield* sql`DROP INDEX commerce_approvals_account_idx`
  yield* sql`CREATE INDEX commerce_approvals_account_page_idx ON commerce_approvals (account_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX commerce_approvals_account_status_idx ON commerce_approvals (account_id, status, created_at DESC, id DESC)`
  yield* sql`DROP INDEX commerce_disputes_buyer_idx`
  yield* sql`DROP INDEX commerce_disputes_seller_idx`
  yield* sql`CREATE INDEX commerce_disputes_buyer_page_idx ON commerce_disputes (buyer_agent_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX commerce_disputes_seller_page_idx ON commerce_disputes (seller_agent_id, created_at DESC, id DESC)`
  yield* sql`ALTER TABLE commerce_services ADD COLUMN min_tier_cents bigint, ADD COLUMN max_tier_cents bigint`
  yield* sql`UPDATE commerce_services SET
    min_tier_cents = (SELECT min((x->>'priceCents')::bigint) FROM jsonb_array_elements(tiers) x),
    max_tier_cents = (SELECT max((x->>'priceCents')::bigint) FROM jsonb_array_elements(tiers) x)`
  yield* sql`CREATE INDEX commerce_services_active_category_idx ON commerce_services (category, id) WHERE status = 'active'`
  yield* sql`CREATE INDEX commerce_services_active_seller_idx ON commerce_services (seller_agent_id, id) WHERE status = 'active'`
  // A narrow band is then a bitmap of its few rows (sorted by id after), not a walk of the id order.
  yield* sql`CREATE INDEX commerce_services_active_min_tier_idx ON commerce_services (min_tier_cents) WHERE status = 'active'`
  yield* sql`CREATE INDEX commerce_services_active_max_tier_idx ON commerce_services (max_tier_cents) WHERE status = 'active'`
  const trgm = yield* sql`SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'`
  if (trgm.length > 0) {
    yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
    yield* sql`CREATE INDEX commerce_services_search_trgm_idx ON commerce_services USING gin (search gin_trgm_ops) WHERE status = 'active'`
  }
})
