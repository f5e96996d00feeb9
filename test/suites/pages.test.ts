// Pages walk an index and stop (embedded and Postgres): with a heavy agent's 12k transactions, 6k
// approvals, 3k disputes, 6k webhook deliveries and 12k delivery attempts among other agents' rows (ANALYZEd, so the planner has real
// statistics), EXPLAIN ANALYZE of the very statements the stores run (the exported page
// builders) shows no sequential scan of a commerce table and no sort of more than the page's
// candidates; the unfiltered pages read at most a few pages' worth of index rows.
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql/Statement"
import {
  SEARCH_WINDOW_PER_ROW,
  searchBeyond,
  searchWindow,
  servicesList,
  servicesPage
} from "../../src/layers/commerce/CatalogStore.postgres.js"
import { approvalsPage } from "../../src/layers/purchases/PurchaseStore.postgres.js"
import { disputesPage } from "../../src/layers/commerce/DisputeStore.postgres.js"
import { transactionsPage } from "../../src/layers/purchases/transactions.postgres.js"
import { attemptsPage, deliveriesPage } from "../../src/layers/webhooks/WebhookStore.postgres.js"
import { acquisitionsPage, paidAcquisition } from "../../src/layers/payments/PaymentsStore.postgres.js"
import { negotiationsPage } from "../../src/layers/negotiation/NegotiationStore.postgres.js"
import { embeddedCase, postgresCase } from "../fixtures/db.js"
import { explain, type PlanNode } from "../fixtures/explain.js"

const BIG = [
  "commerce_transactions",
  "commerce_deliveries",
  "commerce_reviews",
  "commerce_disputes",
  "commerce_approvals",
  "webhook_deliveries",
  "webhook_attempts",
  "acquisitions",
  "negotiations"
]
const HEAVY = "agt_heavy"
const PAGE_INDEXES = [
  "commerce_transactions_buyer_idx",
  "commerce_transactions_seller_idx",
  "commerce_transactions_buyer_status_idx",
  "commerce_transactions_seller_status_idx",
  "commerce_approvals_account_page_idx",
  "commerce_approvals_account_status_idx",
  "commerce_disputes_buyer_page_idx",
  "commerce_disputes_seller_page_idx",
  "webhook_attempts_agent_idx",
  "webhook_attempts_agent_event_idx",
  "webhook_deliveries_agent_seq_idx",
  "acquisitions_agent_idx",
  "acquisitions_paid_idx",
  "negotiations_buyer_page_idx",
  "negotiations_seller_page_idx"
]
const LIMIT = 20

const seed = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    // 20k transactions: the heavy agent buys 12k and sells 4k; 4k between 200 other agents.
    yield* sql.unsafe(`
      INSERT INTO commerce_transactions (id, buyer_agent_id, seller_agent_id, service_id, service_name, category, pricing_model, tier_id,
        list_price_cents, price_cents, seller_cents, fee_cents, status, created_at)
      SELECT 'tx_' || lpad(i::text, 6, '0'),
        CASE WHEN i <= 12000 THEN '${HEAVY}' ELSE 'agt_o' || (i % 200) END,
        CASE WHEN i > 12000 AND i <= 16000 THEN '${HEAVY}' ELSE 'agt_s' || (i % 50) END,
        'svc_' || (i % 40), 'Service ' || (i % 40), 'c' || (i % 5), 'per_call', 'unit', 100, 100, 85, 15,
        CASE WHEN i % 10 = 0 THEN 'refunded' ELSE 'completed' END,
        timestamptz '2026-01-01' + i * interval '1 minute'
      FROM generate_series(1, 20000) i`)
    yield* sql.unsafe(`
      INSERT INTO commerce_deliveries (transaction_id, service_id, tier_id, success, latency_ms, output, error, delivered_at)
      SELECT id, service_id, 'unit', true, 10, '{}'::jsonb, NULL, created_at FROM commerce_transactions`)
    yield* sql.unsafe(`
      INSERT INTO commerce_reviews (id, transaction_id, service_id, reviewer_agent_id, seller_agent_id, rating, text, created_at)
      SELECT 'rv_' || id, id, service_id, buyer_agent_id, seller_agent_id, 4, NULL, created_at FROM commerce_transactions WHERE right(id, 1) IN ('1', '2')`)
    // 4k disputes: 3k filed by the heavy agent (its refunded and some completed purchases), 1k by others.
    yield* sql.unsafe(`
      INSERT INTO commerce_disputes (id, transaction_id, buyer_agent_id, seller_agent_id, reason, status, respond_by, created_at, updated_at)
      SELECT 'dp_' || id, id, buyer_agent_id, seller_agent_id, 'x', 'resolved_rejected', created_at, created_at, created_at
      FROM commerce_transactions WHERE (buyer_agent_id = '${HEAVY}' AND right(id, 2) IN ('03', '07', '13', '17', '23', '27', '33', '37', '43', '47', '53', '57', '63', '67', '73', '77', '83', '87', '93', '97', '05', '15', '25', '35', '45'))
        OR (buyer_agent_id <> '${HEAVY}' AND right(id, 1) IN ('3', '7'))`)
    // 10k approvals: 6k on the heavy account, statuses mixed.
    yield* sql.unsafe(`
      INSERT INTO commerce_approvals (id, account_id, agent_id, service_id, tier_id, quoted_price_cents, reason, status, reserved_transaction_id, created_at, expires_at)
      SELECT 'apr_' || lpad(i::text, 6, '0'), CASE WHEN i <= 6000 THEN 'acct_heavy' ELSE 'acct_o' || (i % 100) END, '${HEAVY}', 'svc_1', 'unit', 100, 'manual',
        (ARRAY['pending', 'approved', 'declined', 'expired'])[1 + i % 4], 'tx_r' || i,
        timestamptz '2026-01-01' + i * interval '1 minute', timestamptz '2026-12-01'
      FROM generate_series(1, 10000) i`)
    for (const t of BIG) yield* sql.unsafe(`ANALYZE ${t}`)
  })

/** No sequential scan of a commerce table; no sort of more than two pages' candidates; rows read from the list's index (rows × loops) at most `readBound`. */
const expectIndexed = (plan: ReadonlyArray<PlanNode>, what: string, readBound: number) => {
  const seq = plan.filter((n) => n["Node Type"] === "Seq Scan" && BIG.includes(n["Relation Name"] ?? ""))
  expect(
    seq.map((n) => n["Relation Name"]),
    `${what}: sequential scans`
  ).toEqual([])
  const sorts = plan.filter((n) => n["Node Type"] === "Sort" || n["Node Type"] === "Incremental Sort")
  for (const s of sorts)
    expect(s["Actual Rows"], `${what}: a sort of ${s["Actual Rows"]} rows`).toBeLessThanOrEqual(2 * LIMIT)
  // The lists' own indexes (not the per-row primary-key lookups of the page's joins).
  const read = plan
    .filter((n) => PAGE_INDEXES.includes(n["Index Name"] ?? ""))
    .reduce((s, n) => s + n["Actual Rows"] * n["Actual Loops"], 0)
  expect(read, `${what}: reads a list index`).toBeGreaterThan(0)
  expect(read, `${what}: rows read from the list's own index`).toBeLessThanOrEqual(readBound)
}

/** Rows the plan's index scans handed over, those their filters then dropped included (rows × loops). */
const indexReads = (plan: ReadonlyArray<PlanNode>) =>
  plan
    .filter((n) => n["Node Type"].includes("Index"))
    .reduce((s, n) => s + (n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0)) * n["Actual Loops"], 0)

for (const c of [embeddedCase, postgresCase]) {
  describe.skipIf(c.skip !== undefined)(`pages walk an index [${c.name}]${c.skip ? ` — ${c.skip}` : ""}`, () => {
    layer(c.layer(), { timeout: "120 seconds" })((it) => {
      it.effect(
        "transactions (both sides, buyer, seller, a later page, filtered), approvals (all, one status), disputes: no seq scan, no sort over the agent's rows",
        () =>
          Effect.gen(function* () {
            const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
            yield* seed(sql)
            const page = { agentId: HEAVY, limit: LIMIT } as const
            const cases: ReadonlyArray<readonly [string, Statement<unknown>, number]> = [
              ["transactions, both sides", transactionsPage(sql, page), 3 * LIMIT],
              ["transactions as buyer", transactionsPage(sql, { ...page, role: "buyer" }), 2 * LIMIT],
              ["transactions as seller", transactionsPage(sql, { ...page, role: "seller" }), 2 * LIMIT],
              [
                "transactions, a page deep in the history",
                transactionsPage(sql, { ...page, before: { createdAt: "2026-01-04T00:00:00.000Z", id: "tx_004000" } }),
                3 * LIMIT
              ],
              // A rare status reads its partial (agent, status, created_at, id) index: only those rows.
              ["transactions, refunded only", transactionsPage(sql, { ...page, status: "refunded" }), 3 * LIMIT],
              [
                "transactions as seller, refunded, a later page",
                transactionsPage(sql, {
                  ...page,
                  role: "seller",
                  status: "refunded",
                  before: { createdAt: "2026-01-11T00:00:00.000Z", id: "tx_015000" }
                }),
                2 * LIMIT
              ],
              // Filters the index does not hold are applied while walking it: the walk stops after `limit` matches.
              ["transactions, completed only", transactionsPage(sql, { ...page, status: "completed" }), 5 * LIMIT],
              ["transactions of one service", transactionsPage(sql, { ...page, serviceId: "svc_3" }), 100 * LIMIT],
              ["approvals", approvalsPage(sql, "acct_heavy", undefined, LIMIT), 2 * LIMIT],
              ["pending approvals", approvalsPage(sql, "acct_heavy", "pending", LIMIT), 2 * LIMIT],
              ["disputes", disputesPage(sql, HEAVY, LIMIT), 3 * LIMIT],
              [
                "approvals, a later page",
                approvalsPage(sql, "acct_heavy", undefined, LIMIT, {
                  createdAt: "2026-01-03T00:00:00.000Z",
                  id: "apr_003000"
                }),
                2 * LIMIT
              ],
              [
                "pending approvals, a later page",
                approvalsPage(sql, "acct_heavy", "pending", LIMIT, {
                  createdAt: "2026-01-03T00:00:00.000Z",
                  id: "apr_003000"
                }),
                2 * LIMIT
              ],
              [
                "disputes, a later page",
                disputesPage(sql, HEAVY, LIMIT, { createdAt: "2026-01-06T00:00:00.000Z", id: "dp_tx_007000" }),
                3 * LIMIT
              ]
            ]
            for (const [what, statement, readBound] of cases) {
              const plan = yield* explain(sql, statement)
              expectIndexed(plan, what, readBound)
              // The page is full: the heavy agent has more than a page of each.
              const rows = yield* statement
              expect(rows.length, what).toBe(LIMIT)
            }
          })
      )

      it.effect(
        "webhook delivery log (all, one event, a later page) and deliveries in outbox order: no seq scan, no sort over the agent's rows",
        () =>
          Effect.gen(function* () {
            const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
            // 100 endpoints; 12k deliveries, 6k of them the heavy agent's; two attempts each (24k).
            yield* sql.unsafe(`
            INSERT INTO webhook_endpoints (id, agent_id, url, events, enabled, secret, created_at, updated_at)
            SELECT 'whe_' || i, CASE WHEN i = 0 THEN '${HEAVY}' ELSE 'agt_w' || i END, 'https://example.com/h', '["*"]'::jsonb, true, 's', now(), now()
            FROM generate_series(0, 99) i`)
            yield* sql.unsafe(`
            INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_id, event_type, body, status, attempts, due_at, created_at, updated_at)
            SELECT 'whd_' || lpad(i::text, 6, '0'), CASE WHEN i <= 6000 THEN 'whe_0' ELSE 'whe_' || (1 + i % 99) END,
              CASE WHEN i <= 6000 THEN '${HEAVY}' ELSE 'agt_w' || (1 + i % 99) END, 'evt_' || i, 'wallet.recharged', '{}', 'succeeded', 2, NULL,
              timestamptz '2026-01-01' + i * interval '1 minute', timestamptz '2026-01-01' + i * interval '1 minute'
            FROM generate_series(1, 12000) i`)
            yield* sql.unsafe(`
            INSERT INTO webhook_attempts (id, delivery_id, agent_id, event_id, event_type, attempt, status, response_status, duration_ms, error, attempted_at, next_retry_at)
            SELECT 'wha_' || d.id || '_' || n, d.id, d.agent_id, d.event_id, d.event_type, n, CASE WHEN n = 1 THEN 'failed' ELSE 'succeeded' END, 500, 5, NULL,
              d.created_at + n * interval '1 second', NULL
            FROM webhook_deliveries d CROSS JOIN generate_series(1, 2) n ORDER BY d.created_at, n`)
            for (const t of ["webhook_endpoints", "webhook_deliveries", "webhook_attempts"])
              yield* sql.unsafe(`ANALYZE ${t}`)
            const cases: ReadonlyArray<readonly [string, Statement<unknown>, number, number]> = [
              ["delivery log", attemptsPage(sql, HEAVY, { limit: LIMIT }), 2 * LIMIT, LIMIT],
              [
                "delivery log, a page deep in it",
                attemptsPage(sql, HEAVY, { limit: LIMIT, beforeId: "wha_whd_001000_1" }),
                2 * LIMIT,
                LIMIT
              ],
              [
                "delivery log of one event",
                attemptsPage(sql, HEAVY, { limit: LIMIT, eventId: "evt_3000" }),
                2 * LIMIT,
                2
              ],
              ["deliveries in outbox order", deliveriesPage(sql, HEAVY, { limit: LIMIT }), 2 * LIMIT, LIMIT],
              [
                "deliveries, a page deep in them",
                deliveriesPage(sql, HEAVY, { limit: LIMIT, afterId: "whd_004000" }),
                2 * LIMIT,
                LIMIT
              ]
            ]
            for (const [what, statement, readBound, expected] of cases) {
              const plan = yield* explain(sql, statement)
              expectIndexed(plan, what, readBound)
              expect((yield* statement).length, what).toBe(expected)
            }
            const oneEvent = yield* explain(sql, attemptsPage(sql, HEAVY, { limit: LIMIT, eventId: "evt_3000" }))
            expect(
              oneEvent.map((n) => n["Index Name"]),
              "one event's log walks its own index"
            ).toContain("webhook_attempts_agent_event_idx")
            // The later pages resume right after the cursor's row.
            const deep = (yield* attemptsPage(sql, HEAVY, {
              limit: 2,
              beforeId: "wha_whd_001000_1"
            })) as ReadonlyArray<{ id: string }>
            expect(deep.map((r) => r.id)).toEqual(["wha_whd_000999_2", "wha_whd_000999_1"])
            const after = (yield* deliveriesPage(sql, HEAVY, { limit: 2, afterId: "whd_004000" })) as ReadonlyArray<{
              id: string
            }>
            expect(after.map((r) => r.id)).toEqual(["whd_004001", "whd_004002"])
          })
      )

      it.effect(
        "the portfolio's acquisitions (first and a later page) and the already-owned check: no seq scan, no sort over the agent's rows",
        () =>
          Effect.gen(function* () {
            const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
            // 10k acquisitions (each with its checkout): 4k of the heavy agent's (the oldest), one in 4 paid.
            yield* sql.unsafe(`
            INSERT INTO checkouts (session_id, purpose, mode, status, amount_cents, currency, description, checkout_url, credits, created_at)
            SELECT 'cs_' || i, 'acquisition', 'payment', 'paid', 100, 'usd', 'x', 'https://example.com/c', 0, now() FROM generate_series(1, 10000) i`)
            yield* sql.unsafe(`
            INSERT INTO acquisitions (id, agent_id, account_id, project_id, title, price_cents, currency, status, checkout_session_id, checkout_url, created_at, paid_at)
            SELECT 'acq_' || lpad(i::text, 6, '0'), CASE WHEN i <= 4000 THEN '${HEAVY}' ELSE 'agt_a' || (i % 300) END, 'acct', 'prj_' || i,
              'P', 100, 'usd', CASE WHEN i % 4 = 0 THEN 'paid' ELSE 'expired' END, 'cs_' || i, 'https://example.com/c',
              timestamptz '2026-01-01' + i * interval '1 minute', NULL
            FROM generate_series(1, 10000) i`)
            yield* sql.unsafe("ANALYZE checkouts")
            yield* sql.unsafe("ANALYZE acquisitions")
            const owned = paidAcquisition(sql, HEAVY, "prj_2000")
            const cases: ReadonlyArray<readonly [string, Statement<unknown>, number, number]> = [
              ["acquisitions", acquisitionsPage(sql, HEAVY, { limit: LIMIT }), 2 * LIMIT, LIMIT],
              [
                "acquisitions, a later page",
                acquisitionsPage(sql, HEAVY, { limit: LIMIT, beforeId: "acq_001000" }),
                2 * LIMIT,
                LIMIT
              ],
              ["already owned?", owned, 1, 1]
            ]
            for (const [what, statement, readBound, expected] of cases) {
              expectIndexed(yield* explain(sql, statement), what, readBound)
              expect((yield* statement).length, what).toBe(expected)
            }
            const later = (yield* acquisitionsPage(sql, HEAVY, { limit: 2, beforeId: "acq_001000" })) as ReadonlyArray<{
              id: string
            }>
            expect(later.map((r) => r.id)).toEqual(["acq_000999", "acq_000998"])
          })
      )

      it.effect(
        "negotiations as buyer and seller (first and a later page): each side walks its index, no sort over the agent's rows",
        () =>
          Effect.gen(function* () {
            const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
            // 12k negotiations: the heavy agent buys in 5k and sells in 3k; 4k between others.
            yield* sql.unsafe(`
            INSERT INTO negotiations (id, buyer_agent_id, seller_agent_id, service_id, tier_id, list_price_cents, terms, status, round, current_price_cents,
              history, created_at, updated_at)
            SELECT 'neg_' || lpad(i::text, 6, '0'),
              CASE WHEN i <= 5000 THEN '${HEAVY}' ELSE 'agt_n' || (i % 300) END,
              CASE WHEN i > 5000 AND i <= 8000 THEN '${HEAVY}' ELSE 'agt_ns' || (i % 40) END,
              'svc_1', 'unit', 100, '{}'::jsonb, 'rejected', 1, 90, '[]'::jsonb,
              timestamptz '2026-01-01' + (i / 2) * interval '1 minute', timestamptz '2026-01-01'
            FROM generate_series(1, 12000) i`)
            yield* sql.unsafe("ANALYZE negotiations")
            const cases: ReadonlyArray<readonly [string, Statement<unknown>]> = [
              ["negotiations", negotiationsPage(sql, HEAVY, { limit: LIMIT })],
              [
                "negotiations, a later page",
                negotiationsPage(sql, HEAVY, {
                  limit: LIMIT,
                  before: { createdAt: "2026-01-03T11:00:00.000Z", id: "neg_004000" }
                })
              ]
            ]
            for (const [what, statement] of cases) {
              expectIndexed(yield* explain(sql, statement), what, 3 * LIMIT)
              expect((yield* statement).length, what).toBe(LIMIT)
            }
            // Newest first across both sides; ties on created_at (two rows a minute) go by id, descending.
            const first = (yield* negotiationsPage(sql, HEAVY, { limit: 3 })) as ReadonlyArray<{ id: string }>
            expect(first.map((r) => r.id)).toEqual(["neg_008000", "neg_007999", "neg_007998"])
          })
      )

      it.effect(
        "a catalogue of 100k services: category, seller, price band, a rare `q` and a later page read an index, not the table",
        () =>
          Effect.gen(function* () {
            const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
            // 100k listed services (and 5k unlisted): 50 categories, 2,000 sellers, prices 1–5,000 cents;
            // one in 10,000 mentions "zeppelin".
            yield* sql.unsafe(`
            INSERT INTO commerce_services (id, seller_agent_id, name, description, category, pricing_model, tags, tiers, negotiation, status, search,
              min_tier_cents, max_tier_cents, created_at, updated_at)
            SELECT 'svc_' || lpad(i::text, 6, '0'), 'agt_seller' || (i % 2000), 'Service ' || i,
              CASE WHEN i % 10000 = 7 THEN 'zeppelin tours' ELSE 'forecasts and reports ' || (i % 997) END,
              'cat' || (i % 50), 'per_call', '[]'::jsonb,
              jsonb_build_array(jsonb_build_object('id', 'unit', 'priceCents', 1 + i % 5000)), '{}'::jsonb,
              CASE WHEN i > 100000 THEN 'inactive' ELSE 'active' END,
              lower('Service ' || i || ' ' || CASE WHEN i % 10000 = 7 THEN 'zeppelin tours' ELSE 'forecasts and reports ' || (i % 997) END || ' cat' || (i % 50)),
              1 + i % 5000, 1 + i % 5000, now(), now()
            FROM generate_series(1, 105000) i`)
            yield* sql.unsafe("ANALYZE commerce_services")
            const trgm = yield* sql<{
              n: number
            }>`SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'commerce_services_search_trgm_idx'`
            expect(trgm[0].n, "the trigram index exists (pg_trgm loaded)").toBe(1)
            const cases: ReadonlyArray<readonly [string, Statement<unknown>, number]> = [
              ["first page", servicesPage(sql, { limit: LIMIT }), LIMIT],
              ["a page deep in the catalogue", servicesPage(sql, { limit: LIMIT, afterId: "svc_090000" }), LIMIT],
              ["one category", servicesPage(sql, { limit: LIMIT, category: "cat7" }), LIMIT],
              ["one seller", servicesPage(sql, { limit: LIMIT, sellerId: "agt_seller7" }), LIMIT],
              ["a price band", servicesPage(sql, { limit: LIMIT, minPriceCents: 100, maxPriceCents: 200 }), LIMIT],
              // A search's two passes (servicesList): a common word fills its page in the first.
              ["a common q, first pass", searchWindow(sql, { limit: LIMIT, q: "forecasts" }), LIMIT],
              ["a rare q, first pass", searchWindow(sql, { limit: LIMIT, q: "zeppelin" }), 1],
              ["a rare q, second pass", searchBeyond(sql, { limit: LIMIT, q: "zeppelin" }), 10]
            ]
            for (const [what, statement, expected] of cases) {
              const plan = yield* explain(sql, statement)
              expect(
                plan.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"]),
                `${what}: sequential scans`
              ).toEqual([])
              for (const n of plan.filter((n) => n["Node Type"] === "Sort"))
                expect(n["Actual Rows"], `${what}: sorts ${n["Actual Rows"]} rows`).toBeLessThanOrEqual(100)
              // Rows the indexes handed over (those a filter then dropped included): a few pages' worth, not the catalogue.
              expect(indexReads(plan), `${what}: rows read from indexes`).toBeLessThanOrEqual(5_000)
              expect((yield* statement).length, what).toBe(expected)
            }
            const rare = yield* explain(sql, searchBeyond(sql, { limit: LIMIT, q: "zeppelin" }))
            expect(
              rare.map((n) => n["Index Name"]),
              "a rare q reads the trigram index"
            ).toContain("commerce_services_search_trgm_idx")
            const ids = (rows: ReadonlyArray<unknown>) => rows.map((r) => (r as { id: string }).id)
            expect(ids(yield* servicesList(sql, { limit: 3, q: "zeppelin" }))).toEqual([
              "svc_000007",
              "svc_010007",
              "svc_020007"
            ])
            expect(ids(yield* servicesList(sql, { limit: 3, q: "zeppelin", afterId: "svc_090007" }))).toEqual([])
            expect(ids(yield* servicesList(sql, { limit: 2, q: "forecasts", afterId: "svc_000006" }))).toEqual([
              "svc_000008",
              "svc_000009"
            ])

            // A rare word the statistics call common: analyzed while 3,000 services mentioned "airship",
            // all but 10 rewritten since (no ANALYZE after). One statement walked the id order through
            // the catalogue here, counting on a match every 33 rows; the first pass stops at its
            // window, the second reads the trigram index's few matches.
            yield* sql.unsafe(
              `UPDATE commerce_services SET search = search || ' airship' WHERE id <= 'svc_100000' AND right(id, 2) IN ('11', '12', '13')`
            )
            yield* sql.unsafe("ANALYZE commerce_services")
            yield* sql.unsafe(`UPDATE commerce_services SET search = replace(search, ' airship', '')
              WHERE search LIKE '%airship%' AND NOT (right(id, 4) = '0011')`)
            const window = yield* explain(sql, searchWindow(sql, { limit: LIMIT, q: "airship" }))
            expect(indexReads(window), "overstated q, first pass: rows read").toBeLessThanOrEqual(
              LIMIT * SEARCH_WINDOW_PER_ROW
            )
            const beyond = yield* explain(sql, searchBeyond(sql, { limit: LIMIT, q: "airship" }))
            expect(
              beyond.map((n) => n["Index Name"]),
              "overstated q, second pass: the trigram index"
            ).toContain("commerce_services_search_trgm_idx")
            expect(indexReads(beyond), "overstated q, second pass: rows read").toBeLessThanOrEqual(5_000)
            expect(ids(yield* servicesList(sql, { limit: LIMIT, q: "airship" }))).toHaveLength(10)
          })
      )
    })
  })
}
