// Migration 0047 (embedded and Postgres): the purchases ACP checkout sessions made before it, kept
// under `acp:<session id>`, are found under the key no client can send, `acp <session id>`; every
// other key stays as it was.
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import migration0047 from "../../src/layers/storage/postgres/migrations/0047_acp_purchase_keys.js"
import { purchaseKeyOf, sessionOfPurchaseKey } from "../../src/schema/acp/sessions.js"
import { embeddedCase, postgresCase } from "../fixtures/db.js"

for (const c of [embeddedCase, postgresCase]) {
  describe.skipIf(c.skip !== undefined)(`ACP purchase keys [${c.name}]${c.skip ? ` — ${c.skip}` : ""}`, () => {
    layer(c.layer(), { timeout: "120 seconds" })((it) => {
      it.effect("a session's purchase and approval keyed acp:<session> are renamed; other keys are not", () =>
        Effect.gen(function* () {
          const sql = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.SqlClient))
          const keys = ["acp:cs_A1", "acp:other", "acpcs_B2", "acp:csC3", "k:acp:cs_D4", null]
          for (const [i, key] of keys.entries()) {
            yield* sql`INSERT INTO commerce_transactions (id, buyer_agent_id, seller_agent_id, service_id, service_name,
                category, pricing_model, tier_id, list_price_cents, price_cents, seller_cents, fee_cents, status,
                idempotency_key, created_at)
              VALUES (${`tx_mig${i}`}, 'agt_b', 'agt_s', 'svc_1', 'S', 'c', 'per_call', 'unit', 100, 100, 85, 15,
                'completed', ${key}, now())`
            yield* sql`INSERT INTO commerce_approvals (id, account_id, agent_id, service_id, tier_id,
                quoted_price_cents, reason, status, reserved_transaction_id, idempotency_key, created_at, expires_at)
              VALUES (${`apr_mig${i}`}, 'acct', 'agt_b', 'svc_1', 'unit', 100, 'manual', 'pending', ${`tx_r${i}`},
                ${key}, now(), now())`
          }
          yield* Effect.provideService(migration0047, SqlClient.SqlClient, sql)
          const after = ["acp cs_A1", "acp:other", "acpcs_B2", "acp:csC3", "k:acp:cs_D4", null]
          const tx = yield* sql<{ k: string | null }>`SELECT idempotency_key AS k FROM commerce_transactions
            WHERE id LIKE 'tx_mig%' ORDER BY id`
          expect(tx.map((r) => r.k)).toEqual(after)
          const apr = yield* sql<{ k: string | null }>`SELECT idempotency_key AS k FROM commerce_approvals
            WHERE id LIKE 'apr_mig%' ORDER BY id`
          expect(apr.map((r) => r.k)).toEqual(after)
          // The renamed key is the one the session looks its purchase up by.
          expect(purchaseKeyOf("cs_A1")).toBe("acp cs_A1")
          expect(sessionOfPurchaseKey("acp cs_A1")).toBe("cs_A1")
          expect(sessionOfPurchaseKey("acp:cs_A1")).toBeNull()
          // A later line's key names its line, and still its session.
          expect(purchaseKeyOf("cs_A1", 1)).toBe("acp cs_A1 line_item_2")
          expect(sessionOfPurchaseKey(purchaseKeyOf("cs_A1", 1))).toBe("cs_A1")
        })
      )
    })
  })
}
