// The locks a purchase from a wallet takes first, on Postgres and the embedded store: shared by the
// wallet store (the paid call) and the settlement store (the buy), so both take the same rows in the
// same order (docs/money.md "Concurrency").
import type { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { WalletRecord } from "../../../schema/commerce/wallets.js"
import { walletAccount } from "../../../schema/ledger/ledger.js"

const json = (value: unknown) => JSON.stringify(value ?? null)

/**
 * CTEs `w` (the wallet row) and `b` (its ledger balance: the locked base row plus the account's
 * credit shards), both FOR UPDATE, in the order every purchase takes them. Credit shards of a
 * wallet only grow, so a sum read from this snapshot errs on the safe side. `w` is empty for an
 * agent without a wallet row, `b` without a balance row: makePurchaseRows makes them, then the
 * lock is taken again. Both ways to buy from a wallet take them with these CTEs: WalletStore.lockForPurchase (the paid
 * call) and SettlementStore.open (the buy).
 */
export const purchaseLockCtes = (sql: SqlClient.SqlClient, agentId: string) => {
  const account = walletAccount(agentId)
  return sql`w AS (SELECT agent_id, policy, created_at, updated_at FROM commerce_wallets WHERE agent_id = ${agentId}
      FOR UPDATE),
    b AS (SELECT (l.balance
        + COALESCE((SELECT SUM(c.amount) FROM ledger_balance_credits c WHERE c.account = ${account}), 0))::bigint
        AS balance
      FROM ledger_balances l WHERE l.account = ${account} FOR UPDATE OF l)`
}

/** A first purchase: the wallet row (as `initial`) and its balance row (0), where missing. */
export const makePurchaseRows = (sql: SqlClient.SqlClient, w: WalletRecord) =>
  Effect.andThen(
    sql`INSERT INTO commerce_wallets (agent_id, policy, created_at, updated_at)
        VALUES (${w.agentId}, ${json(w.policy)}::jsonb, ${w.createdAt}, ${w.updatedAt})
        ON CONFLICT (agent_id) DO NOTHING`,
    sql`INSERT INTO ledger_balances (account, balance) VALUES (${walletAccount(w.agentId)}, 0)
        ON CONFLICT (account) DO NOTHING`
  )
