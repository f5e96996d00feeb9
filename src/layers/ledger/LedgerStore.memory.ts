// In-memory ledger store: entries, per-account posting indexes and balances.
import { Effect, Layer } from "effect"
import { type JournalEntry, mayGoNegative } from "../../schema/ledger/ledger.js"
import { LedgerStore } from "../../services/ledger/Ledger.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryLedgerStore = Layer.effect(
  LedgerStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const balances = db.table<string, number>("ledger_balances")
    const entries = db.table<string, JournalEntry>("ledger_entries")
    const byAccount = db.table<string, Array<string>>("ledger_entries_by_account")
    const byReference = db.table<string, Array<string>>("ledger_entries_by_reference")
    const all = db.table<string, Array<string>>("ledger_entry_order")
    return {
      // The memory engine's write lock already serialises units of work: reading is locking.
      lockBalances: (accounts) => Effect.sync(() => new Map(accounts.map((a) => [a, balances.get(a) ?? 0]))),
      // Effect.fnUntraced: the generator function is made once, not per call (see MemoryDb.ts on why).
      append: Effect.fnUntraced(function* (entry: JournalEntry) {
        yield* entries.set(entry.id, entry)
        yield* all.append("all", entry.id)
        yield* byReference.append(entry.reference, entry.id)
        for (const account of new Set(entry.postings.map((p) => p.account))) yield* byAccount.append(account, entry.id)
        for (const p of entry.postings) yield* balances.set(p.account, (balances.get(p.account) ?? 0) + p.amount)
      }),
      balance: (account) => Effect.sync(() => balances.get(account) ?? 0),
      entriesFor: (account, { limit, before }) =>
        Effect.sync(() => {
          const list = byAccount.get(account) ?? []
          let end = list.length
          if (before !== undefined) {
            const i = list.lastIndexOf(before)
            end = i >= 0 ? i : 0
          }
          const out: Array<JournalEntry> = []
          for (let i = end - 1; i >= 0 && out.length < limit; i--) out.push(entries.get(list[i])!)
          return out
        }),
      entriesByReference: (reference) =>
        Effect.sync(() => (byReference.get(reference) ?? []).map((id) => entries.get(id)!)),
      check: Effect.sync(() => {
        const derived = new Map<string, number>()
        let total = 0
        for (const id of all.get("all") ?? []) {
          for (const p of entries.get(id)!.postings) {
            derived.set(p.account, (derived.get(p.account) ?? 0) + p.amount)
            total += p.amount
          }
        }
        const mismatches: Array<{ account: string; stored: number; derived: number }> = []
        const accounts = new Set([...derived.keys(), ...balances.rows.keys()])
        for (const a of accounts) {
          const stored = balances.get(a) ?? 0
          const d = derived.get(a) ?? 0
          if (stored !== d) mismatches.push({ account: a, stored, derived: d })
        }
        const negative = [...accounts].filter((a) => !mayGoNegative(a) && (balances.get(a) ?? 0) < 0)
        return {
          totalCents: total,
          mismatches,
          negative,
          ok: total === 0 && mismatches.length === 0 && negative.length === 0
        }
      })
    }
  })
)
