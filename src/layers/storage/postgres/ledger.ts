// Postgres ledger store: balances locked FOR UPDATE in account order, postings append-only.
import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { JournalEntry, type EntryKind, mayGoNegative } from "../../../schema/ledger.js"
import { LedgerStore } from "../../../services/Ledger.js"
import { iso, orUnavailable, nonEmpty } from "./PgDb.js"

interface EntryRow { seq: number; id: string; kind: EntryKind; reference: string; memo: string; createdAt: Date }
interface PostingRow { entrySeq: number; account: string; amount: number }

/**
 * The CTEs (for a WITH) that write an entry: `e` (the entry, RETURNING seq), its postings, and each posting
 * added to its account's balance (the row made when missing). Balances move by their postings in
 * account order, so concurrent writers take the rows in one order; a credited account is not
 * locked earlier in the unit of work and its row is held only from here to commit. Shared with
 * the settlement's one statement (settlement.ts). Postings are already merged per account.
 */
export const entryCtes = (sql: SqlClient.SqlClient, entry: JournalEntry) => {
  const rows = (ps: ReadonlyArray<{ readonly account: string; readonly amount: number }>) => ps.map((p) => ({ account: p.account, amount: String(p.amount) }))
  // A debit of a constrained account was locked and checked (Ledger.prepare), so its row exists and
  // is updated; every other posting is upserted (an insert of a negative amount would trip the
  // balance's CHECK before its conflict is seen, so debits are not upserted).
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
      ? sql`, bc AS (INSERT INTO ledger_balances (account, balance)
          SELECT v.account, v.amount::bigint FROM ${sql.updateValues(nonEmpty(others), "v")} ORDER BY v.account
          ON CONFLICT (account) DO UPDATE SET balance = ledger_balances.balance + excluded.balance)`
      : sql``
  }`
}

export const PgLedgerStore = Layer.effect(
  LedgerStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const hydrate = (rows: ReadonlyArray<EntryRow>) =>
      Effect.gen(function* () {
        if (rows.length === 0) return [] as Array<JournalEntry>
        const postings = yield* sql<PostingRow>`SELECT entry_seq, account, amount FROM ledger_postings WHERE entry_seq IN ${sql.in(rows.map((r) => r.seq))}`
        const bySeq = new Map<number, Array<{ account: string; amount: number }>>()
        for (const p of postings) {
          const list = bySeq.get(p.entrySeq) ?? []
          list.push({ account: p.account, amount: p.amount })
          bySeq.set(p.entrySeq, list)
        }
        return rows.map((r) =>
          JournalEntry.make({ id: r.id, kind: r.kind, reference: r.reference, memo: r.memo, createdAt: iso(r.createdAt), postings: bySeq.get(r.seq) ?? [] })
        )
      })

    return {
      lockBalances: (accounts) =>
        orUnavailable(
          Effect.gen(function* () {
            // One statement, ordered: concurrent units of work lock in the same order (no deadlock).
            // Rows are created (at 0) only when one is missing, so the common case is one round trip.
            const lock = sql<{ account: string; balance: number }>`
              SELECT account, balance FROM ledger_balances WHERE account IN ${sql.in([...accounts])} ORDER BY account FOR UPDATE`
            let rows = yield* lock
            if (rows.length < accounts.length) {
              yield* sql`INSERT INTO ledger_balances ${sql.insert(nonEmpty(accounts.map((account) => ({ account, balance: 0 }))))} ON CONFLICT (account) DO NOTHING`
              rows = yield* lock
            }
            return new Map(rows.map((r) => [r.account, r.balance]))
          })
        ),
      append: (entry) => orUnavailable(sql`WITH ${entryCtes(sql, entry)} SELECT seq FROM e`).pipe(Effect.asVoid),
      balance: (account) =>
        orUnavailable(sql<{ balance: number }>`SELECT balance FROM ledger_balances WHERE account = ${account}`).pipe(Effect.map((r) => r[0]?.balance ?? 0)),
      entriesFor: (account, { limit, before }) =>
        orUnavailable(
          Effect.gen(function* () {
            const beforeSeq = before
              ? (yield* sql<{ seq: number }>`SELECT seq FROM ledger_entries WHERE id = ${before}`)[0]?.seq ?? 0
              : Number.MAX_SAFE_INTEGER
            const rows = yield* sql<EntryRow>`
              SELECT e.seq, e.id, e.kind, e.reference, e.memo, e.created_at FROM ledger_postings p
              JOIN ledger_entries e ON e.seq = p.entry_seq
              WHERE p.account = ${account} AND p.entry_seq < ${beforeSeq}
              ORDER BY p.entry_seq DESC LIMIT ${limit}`
            return yield* hydrate(rows)
          })
        ),
      entriesByReference: (reference) =>
        orUnavailable(
          Effect.flatMap(sql<EntryRow>`SELECT seq, id, kind, reference, memo, created_at FROM ledger_entries WHERE reference = ${reference} ORDER BY seq`, hydrate)
        ),
      check: orUnavailable(
        Effect.gen(function* () {
          const [total] = yield* sql<{ total: number | null }>`SELECT COALESCE(SUM(amount), 0)::bigint AS total FROM ledger_postings`
          const mismatches = yield* sql<{ account: string; stored: number; derived: number }>`
            SELECT COALESCE(b.account, d.account) AS account, COALESCE(b.balance, 0)::bigint AS stored, COALESCE(d.derived, 0)::bigint AS derived
            FROM ledger_balances b
            FULL OUTER JOIN (SELECT account, SUM(amount)::bigint AS derived FROM ledger_postings GROUP BY account) d ON d.account = b.account
            WHERE COALESCE(b.balance, 0) <> COALESCE(d.derived, 0)`
          const negatives = yield* sql<{ account: string }>`SELECT account FROM ledger_balances WHERE balance < 0`
          const negative = negatives.map((r) => r.account).filter((a) => !mayGoNegative(a))
          const totalCents = total?.total ?? 0
          return { totalCents, mismatches, negative, ok: totalCents === 0 && mismatches.length === 0 && negative.length === 0 }
        })
      )
    }
  })
)
