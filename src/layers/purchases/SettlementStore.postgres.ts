// Postgres settlement writer: each step of a purchase (ledger entry, postings and balances, the
// transaction with its delivery, the buyer's running totals and the counters, the order placed or
// closed, the events) in one statement, and the openings in another: a buy's locks and service read,
// or an order's lock and its escrow's balance. This is the purchase domain's own SQL over the ledger,
// wallet and event tables: a buy's statements are BEGIN, open, write, COMMIT, and so are an order's
// answer's (test/suites/purchase-statements.test.ts counts them), so the fragments it needs live here
// rather than behind the ledger's and events' ports (each of which would be a statement more). The
// ledger and event adapters keep their own copies; the settlement suite runs both paths on every
// storage. The rows here are mapped by hand (the hot path): test/suites/settlement.test.ts pins
// `open`'s mapping against the catalogue's decoded row.
import { SqlClient, type Statement } from "effect/sql"
import { Effect, Layer } from "effect"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"
import type { DomainEvent } from "../../schema/events/events.js"
import { escrowAccount, type JournalEntry, mayGoNegative } from "../../schema/ledger/ledger.js"
import { SettlementStore, type SettlementWrite } from "../../services/purchases/SettlementStore.js"
import { iso, nonEmpty, orUnavailable } from "../storage/postgres/PgDb.js"
import { decodeFirst } from "../storage/postgres/rows.js"
import { SERVICE_COLUMNS } from "../commerce/CatalogStore.postgres.js"
import { makePurchaseRows, purchaseLockCtes } from "../storage/postgres/purchaseLock.js"
import { insertPendingTransaction, transactionCtes } from "./transactions.postgres.js"
import { ORDER_COLUMNS, orderClose, orderInsert, OrderRow, toOrder } from "./OrderStore.postgres.js"

/** Shard rows per account for credits (migration 0017), as the ledger store writes them. */
const CREDIT_SHARDS = 16

/** The shard an entry credits: from its (random) id, so one entry's credits land on one shard per account. */
const shardOf = (entryId: string) => {
  let h = 0
  for (let i = 0; i < entryId.length; i++) h = (h * 31 + entryId.charCodeAt(i)) | 0
  return Math.abs(h) % CREDIT_SHARDS
}

/**
 * The CTEs that write a ledger entry, as the ledger store's `append` does: `e` (the entry), its
 * postings, and the balances. A debit of a constrained account was locked and checked
 * (Ledger.prepare) and moves its `ledger_balances` row; every other posting is added to a shard
 * row of `ledger_balance_credits`, taken in (account, shard) order, so concurrent buyers of one
 * seller, and every purchase's fee, do not queue on one row. Postings are already merged per account.
 */
const entryCtes = (sql: SqlClient.SqlClient, entry: JournalEntry) => {
  const rows = (ps: ReadonlyArray<{ readonly account: string; readonly amount: number }>) =>
    ps.map((p) => ({ account: p.account, amount: String(p.amount) }))
  const debits = rows(entry.postings.filter((p) => p.amount < 0 && !mayGoNegative(p.account)))
  const others = rows(entry.postings.filter((p) => p.amount > 0 || mayGoNegative(p.account)))
  return sql`e AS (
      INSERT INTO ledger_entries (id, kind, reference, memo, created_at)
      VALUES (${entry.id}, ${entry.kind}, ${entry.reference}, ${entry.memo}, ${entry.createdAt}) RETURNING seq),
    p AS (INSERT INTO ledger_postings (entry_seq, account, amount)
      SELECT e.seq, v.account, v.amount::bigint FROM e, ${sql.updateValues(nonEmpty(rows(entry.postings)), "v")})${
        debits.length > 0
          ? // An upsert: an order's escrow was credited on a shard row when it was placed, so its base row
            // may not be there yet when its answer debits it (its balance, base and shards, was read and
            // checked under the order's lock: SettlementStore.openOrder).
            sql`, bd AS (INSERT INTO ledger_balances (account, balance)
          SELECT v.account, v.amount::bigint FROM ${sql.updateValues(nonEmpty(debits), "v")}
          ON CONFLICT (account) DO UPDATE SET balance = ledger_balances.balance + excluded.balance)`
          : sql``
      }${
        others.length > 0
          ? sql`, bc AS (INSERT INTO ledger_balance_credits (account, shard, amount)
          SELECT v.account, ${shardOf(entry.id)}::smallint, v.amount::bigint
          FROM ${sql.updateValues(nonEmpty(others), "v")} ORDER BY v.account
          ON CONFLICT (account, shard) DO UPDATE SET amount = ledger_balance_credits.amount + excluded.amount)`
          : sql``
      }`
}

/** The CTE `ev` that appends the purchase's events to the outbox, as the event store's `appendMany` does. */
const eventsCte = (sql: SqlClient.SqlClient, events: ReadonlyArray<DomainEvent>) =>
  sql`ev AS (INSERT INTO events ${sql.insert(
    nonEmpty(
      events.map((e) => ({
        id: e.id,
        type: e.type,
        agentId: e.agentId,
        occurredAt: e.occurredAt,
        data: JSON.stringify(e.data)
      }))
    )
  )})`

/** The open statement's row: the wallet's columns, its balance and the service's (SERVICE_COLUMNS). */
type Opened = Omit<ServiceRecord, "createdAt" | "updatedAt"> & {
  createdAt: Date
  updatedAt: Date
  wAgentId: string
  wPolicy: WalletRecord["policy"]
  wCreatedAt: Date
  wUpdatedAt: Date
  balance: number | null
  sSellerAccountId: string | null
}

export const PgSettlementStore = Layer.effect(
  SettlementStore,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    open: Effect.fnUntraced(function* ({ wallet, serviceId }) {
      // The purchase's locks and the service, in one statement. One row always: the wallet's half
      // is null until makePurchaseRows made it, the service's when unknown. No join condition is
      // hashable, so the plan is nested loops in this order: w, then b, locked in that order.
      const select = sql<Opened>`WITH ${purchaseLockCtes(sql, wallet.agentId)},
            s AS (SELECT ${sql.literal(SERVICE_COLUMNS)},
                (SELECT a.account_id FROM agents a WHERE a.id = commerce_services.seller_agent_id) AS s_seller_account_id
              FROM commerce_services WHERE id = ${serviceId})
          SELECT w.agent_id AS w_agent_id, w.policy AS w_policy, w.created_at AS w_created_at,
            w.updated_at AS w_updated_at, b.balance, s.*
          FROM (SELECT 1) one LEFT JOIN w ON TRUE LEFT JOIN b ON w.agent_id IS NOT NULL LEFT JOIN s ON TRUE`
      let [row] = yield* select
      if (row!.wAgentId === null || row!.balance === null) {
        yield* makePurchaseRows(sql, wallet)
        ;[row] = yield* select
      }
      const { wAgentId, wPolicy, wCreatedAt, wUpdatedAt, balance, sSellerAccountId, ...service } = row!
      return {
        wallet: { agentId: wAgentId, policy: wPolicy, createdAt: iso(wCreatedAt), updatedAt: iso(wUpdatedAt) },
        balanceCents: balance ?? 0,
        sellerAccountId: sSellerAccountId ?? undefined,
        service:
          service.id === null
            ? undefined
            : { ...service, createdAt: iso(service.createdAt), updatedAt: iso(service.updatedAt) }
      }
    }, orUnavailable),
    openOrder: Effect.fnUntraced(function* (orderId: string) {
      // The order locked, and its escrow's balance (the base row and the credit shards) read in the same
      // statement. Only a unit of work holding the order's lock moves its escrow, and it closes the order
      // as it does. After a wait for that lock the balance is from the statement's start (READ COMMITTED
      // re-reads only the locked row), but the order row is re-read: a closed order's escrow is never
      // used, and a still-pending one's escrow has not moved, so the figure used is the balance.
      // Then, for an order holding its own escrow (not a saga's), the buyer's wallet row: its answer moves
      // the price from held to spent (or to nothing), and a purchase's limit check reads the two apart
      // under that lock, so it must see the answer on one side only (docs/money.md "Concurrency";
      // test/suites/purchase-locks.test.ts). Always the order first: no unit of work that holds a wallet
      // locks an order.
      const escrow = escrowAccount(orderId)
      const rows =
        yield* sql`WITH o AS (SELECT ${sql.literal(ORDER_COLUMNS)} FROM orders WHERE id = ${orderId} FOR UPDATE),
          w AS (SELECT agent_id FROM commerce_wallets
            WHERE agent_id = (SELECT buyer_agent_id FROM o WHERE saga_id IS NULL) FOR UPDATE)
        SELECT o.*,
          (COALESCE((SELECT l.balance FROM ledger_balances l WHERE l.account = ${escrow}), 0)
            + COALESCE((SELECT SUM(c.amount) FROM ledger_balance_credits c WHERE c.account = ${escrow}), 0)
          )::bigint AS escrow_cents,
          (SELECT count(*) FROM w)::int AS buyer_locked
        FROM o`
      const row = yield* decodeFirst(OrderRow)(rows)
      if (row === undefined) return undefined
      return { order: toOrder(row), escrowCents: Number((rows[0] as { escrowCents: unknown }).escrowCents) }
    }, orUnavailable),
    write: Effect.fnUntraced(function* ({ entry, transaction, order, events }: SettlementWrite) {
      const ctes: Array<Statement.Fragment> = []
      if (entry !== null) ctes.push(entryCtes(sql, entry))
      if (transaction !== undefined) {
        const { tx, delivery, replacesPending } = transaction
        ctes.push(
          delivery === null
            ? sql`t AS (${insertPendingTransaction(sql, tx)})`
            : transactionCtes(sql, tx, delivery, { replacesPending })
        )
      }
      if (order !== undefined) {
        ctes.push(
          "place" in order ? sql`o AS (${orderInsert(sql, order.place)})` : sql`o AS (${orderClose(sql, order.close)})`
        )
      }
      if (events.length > 0) ctes.push(eventsCte(sql, events))
      if (ctes.length === 0) return
      yield* sql`WITH ${sql.join(", ", false)(ctes)} SELECT 1`
    }, orUnavailable)
  }))
)
