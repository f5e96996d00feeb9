// Every Postgres migration, in order. Add a file per change; never edit one that has shipped.
import type { SqlClient } from "effect/sql"
import type { Effect } from "effect"
import m0001 from "./0001_foundation.js"
import m0002 from "./0002_keys.js"
import m0003 from "./0003_ledger.js"
import m0004 from "./0004_events.js"
import m0005 from "./0005_commerce.js"
import m0007 from "./0007_negotiation_saga.js"
import m0008 from "./0008_payments.js"
import m0010 from "./0010_projects.js"
import m0011 from "./0011_webhooks.js"
import m0012 from "./0012_invest.js"
import m0013 from "./0013_mpp_open_challenges.js"
import m0014 from "./0014_spend_days.js"
import m0015 from "./0015_webhook_fairness.js"
import m0017 from "./0017_ledger_credit_shards.js"
import m0018 from "./0018_agent_counters.js"
import m0019 from "./0019_list_pages.js"
import m0020 from "./0020_service_ranking.js"
import m0021 from "./0021_owner_limits.js"
import m0022 from "./0022_idempotency_owner.js"
import m0023 from "./0023_service_fulfilment.js"
import m0024 from "./0024_audit.js"
import m0025 from "./0025_refusals.js"
import m0026 from "./0026_write_receipts.js"
import m0027 from "./0027_orders.js"
import m0028 from "./0028_pending_transactions.js"
import m0029 from "./0029_seller_earnings.js"
import m0030 from "./0030_order_origin.js"
import m0031 from "./0031_seller_negotiation_inbox.js"
import m0032 from "./0032_order_paid_call.js"
import m0033 from "./0033_order_reported_latency.js"
import m0034 from "./0034_seller_earning_days.js"
import m0035 from "./0035_refunded_reviews.js"
import m0036 from "./0036_sold_promise.js"
import m0037 from "./0037_catalogue_plans.js"
import m0038 from "./0038_x402_payments.js"
import m0039 from "./0039_acp_checkout_sessions.js"
import m0040 from "./0040_order_cancelled.js"
import m0041 from "./0041_x402_refund_attempt.js"
import m0042 from "./0042_approval_withdrawn.js"
import m0043 from "./0043_approvals_agent_page.js"
import m0044 from "./0044_a2a_push_configs.js"
import m0045 from "./0045_acp_order_notices.js"
import m0046 from "./0046_sagas_buyer_page.js"
import m0047 from "./0047_acp_purchase_keys.js"
import m0048 from "./0048_a2a_x402_tasks.js"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_foundation": m0001,
  "0002_keys": m0002,
  "0003_ledger": m0003,
  "0004_events": m0004,
  "0005_commerce": m0005,
  "0007_negotiation_saga": m0007,
  "0008_payments": m0008,
  "0010_projects": m0010,
  "0011_webhooks": m0011,
  "0012_invest": m0012,
  "0013_mpp_open_challenges": m0013,
  "0014_spend_days": m0014,
  "0015_webhook_fairness": m0015,
  "0017_ledger_credit_shards": m0017,
  "0018_agent_counters": m0018,
  "0019_list_pages": m0019,
  "0020_service_ranking": m0020,
  "0021_owner_limits": m0021,
  "0022_idempotency_owner": m0022,
  "0023_service_fulfilment": m0023,
  "0024_audit": m0024,
  "0025_refusals": m0025,
  "0026_write_receipts": m0026,
  "0027_orders": m0027,
  "0028_pending_transactions": m0028,
  "0029_seller_earnings": m0029,
  "0030_order_origin": m0030,
  "0031_seller_negotiation_inbox": m0031,
  "0032_order_paid_call": m0032,
  "0033_order_reported_latency": m0033,
  "0034_seller_earning_days": m0034,
  "0035_refunded_reviews": m0035,
  "0036_sold_promise": m0036,
  "0037_catalogue_plans": m0037,
  "0038_x402_payments": m0038,
  "0039_acp_checkout_sessions": m0039,
  "0040_order_cancelled": m0040,
  "0041_x402_refund_attempt": m0041,
  "0042_approval_withdrawn": m0042,
  "0043_approvals_agent_page": m0043,
  "0044_a2a_push_configs": m0044,
  "0045_acp_order_notices": m0045,
  "0046_sagas_buyer_page": m0046,
  "0047_acp_purchase_keys": m0047,
  "0048_a2a_x402_tasks": m0048
}
