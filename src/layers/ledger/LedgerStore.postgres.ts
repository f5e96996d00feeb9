// Postgres ledger store: debited balances locked FOR UPDATE in account order, credits in shard rows, postings append-only.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { JournalEntry, type EntryKind, mayGoNegative } from "../../schema/ledger/ledger.js"
import { LedgerStore } from "../../services/ledger/Ledger.js"
import { iso, orUnavailable, nonEmpty } from "../storage/postgres/PgDb.js"

interface EntryRow {
  seq: number
  id: string
  kind: EntryKind
  reference: string
  memo: string
  createdAt: Date
}
interface PostingRow {
  entrySeq: number
  account: string
  amount: number
}

/** Shard rows per account for credits (migration 0017): buyers of one seller spread over them. */
export const CREDIT_SHARDS = 16

/** The shard an entry credits: from its (random) id, so one entry's credits land on one shard per account. */
const shardOf = (entryId: string) => {
  let h = 0
  for (let i = 0; i < entryId.length; i++) h = (h * 31 + entryId.charCodeAt(i)) | 0
  return Math.abs(h) % CREDIT_SHARDS
}

/**
 * The CTEs (for a WITH) that write an entry: `e` (the entry, RETURNING seq), its postings, and the
 * balances. A debit of a constrained account was locked and checked (Ledger.prepare) and moves its
 * `ledger_balances` row; every other posting is added to a shard row of `ledger_balance_credits`
 * (migration 0017), taken in (account, shard) order and held only until commit, so concurrent
 * buyers of one seller, and every purchase's fee, do not queue on one row. Shared with the
 * settlement's one statement (settlement.ts). Postings are already merged per account.
 */
export const entryCtes = (sql: SqlClient.SqlClient, entry: JournalEntry) => {
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
          ? sql`, bd AS (UPDATE ledger_balances SET balance = ledger_balances.balance + v.amount::bigint
          FROM ${sql.updateValues(nonEmpty(debits), "v")} WHERE ledger_balances.account = v.account)`
          : sql``
      }${
        others.length > 0
          ? sql`, bc AS (INSERT INTO ledger_balance_credits (account, shard, amount)
          SELECT v.account, ${shardOf(entry.id)}::smallint, v.amount::bigint FROM ${sql.updateValues(nonEmpty(others), "v")} ORDER BY v.account
          ON CONFLICT (account, shard) DO UPDATE SET amount = ledger_balance_credits.amount + excluded.amount)`
          : sql``
      }`
}

export const PgLedgerStore = Layer.effect(
  LedgerStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const hydrate = Effect.fnUntraced(function* (rows: ReadonlyArray<EntryRow>) {
      if (rows.length === 0) return [] as Array<JournalEntry>
      const postings =
        yield* sql<PostingRow>`SELECT entry_seq, account, amount FROM ledger_postings WHERE entry_seq IN ${sql.in(rows.map((r) => r.seq))}`
      const bySeq = new Map<number, Array<{ account: string; amount: number }>>()
      for (const p of postings) {
        const list = bySeq.get(p.entrySeq) ?? []
        list.push({ account: p.account, amount: p.amount })
        bySeq.set(p.entrySeq, list)
      }
      return rows.map((r) =>
        JournalEntry.make({
          id: r.id,
          kind: r.kind,
          reference: r.reference,
          memo: r.memo,
          createdAt: iso(r.createdAt),
          postings: bySeq.get(r.seq) ?? []
        })
      )
    })

    return {
      lockBalances: Effect.fnUntraced(function* (accounts) {
        // One statement, ordered: concurrent units of work lock in the same order (no deadlock).
        // Rows are created (at 0) only when one is missing, so the common case is one round trip.
        // The balance is the locked row plus the account's credit shards. Shards of a constrained
        // account only grow (debits move the locked row), so a sum read from this statement's
        // snapshot is at most the current one: the check errs on the safe side.
        const lock = sql<{ account: string; balance: number }>`
            SELECT b.account, (b.balance + COALESCE((SELECT SUM(c.amount) FROM ledger_balance_credits c WHERE c.account = b.account), 0))::bigint AS balance
            FROM ledger_balances b WHERE b.account IN ${sql.in([...accounts])} ORDER BY b.account FOR UPDATE OF b`
        let rows = yield* lock
        if (rows.length < accounts.length) {
          yield* sql`INSERT INTO ledger_balances ${sql.insert(nonEmpty(accounts.map((account) => ({ account, balance: 0 }))))} ON CONFLICT (account) DO NOTHING`
          rows = yield* lock
        }
        return new Map(rows.map((r) => [r.account, r.balance]))
      }, orUnavailable),
      append: (entry) => orUnavailable(sql`WITH ${entryCtes(sql, entry)} SELECT seq FROM e`).pipe(Effect.asVoid),
      balance: (account) =>
        orUnavailable(
          sql<{
            balance: number
          }>`SELECT ((SELECT COALESCE(SUM(balance), 0) FROM ledger_balances WHERE account = ${account})
            + (SELECT COALESCE(SUM(amount), 0) FROM ledger_balance_credits WHERE account = ${account}))::bigint AS balance`
        ).pipe(Effect.map((r) => r[0]?.balance ?? 0)),
      entriesFor: Effect.fnUntraced(function* (account, { limit, before }) {
        const beforeSeq = before
          ? ((yield* sql<{ seq: number }>`SELECT seq FROM ledger_entries WHERE id = ${before}`)[0]?.seq ?? 0)
          : Number.MAX_SAFE_INTEGER
        const rows = yield* sql<EntryRow>`
            SELECT e.seq, e.id, e.kind, e.reference, e.memo, e.created_at FROM ledger_postings p
            JOIN ledger_entries e ON e.seq = p.entry_seq
            WHERE p.account = ${account} AND p.entry_seq < ${beforeSeq}
            ORDER BY p.entry_seq DESC LIMIT ${limit}`
        return yield* hydrate(rows)
      }, orUnavailable),
      entriesByReference: (reference) =>
        orUnavailable(
          Effect.flatMap(
            sql<EntryRow>`SELECT seq, id, kind, reference, memo, created_at FROM ledger_entries WHERE reference = ${reference} ORDER BY seq`,
            hydrate
          )
        ),
      check: orUnavailable(
        Effect.gen(function* () {
          const [total] = yield* sql<{
            total: number | null
          }>`SELECT COALESCE(SUM(amount), 0)::bigint AS total FROM ledger_postings`
          const mismatches = yield* sql<{ account: string; stored: number; derived: number }>`
            SELECT COALESCE(b.account, d.account) AS account, COALESCE(b.balance, 0)::bigint AS stored, COALESCE(d.derived, 0)::bigint AS derived
            FROM ledger_account_balances b
            FULL OUTER JOIN (SELECT account, SUM(amount)::bigint AS derived FROM ledger_postings GROUP BY account) d ON d.account = b.account
            WHERE COALESCE(b.balance, 0) <> COALESCE(d.derived, 0)`
          const negatives = yield* sql<{
            account: string
          }>`SELECT account FROM ledger_account_balances WHERE balance < 0`
          const negative = negatives.map((r) => r.account).filter((a) => !mayGoNegative(a))
          const totalCents = total?.total ?? 0
          return {
            totalCents,
            mismatches,
            negative,
            ok: totalCents === 0 && mismatches.length === 0 && negative.length === 0
          }
        })
      )
    }
  })
)
