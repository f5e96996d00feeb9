// The owner's promises, checked from raw data after every step of the money model — what was
// bought (the transactions), what is held (the escrow accounts of the run's sagas) and what the
// owner set (the model's policies) — never through the service's own policy code or spend totals:
// a step that moves money leaves completed + held within the daily and monthly limits, and no
// single purchase or escrow hold above the per-transaction limit. On the SQL storages the ledger
// is also checked by plain SQL over its postings, independent of the service's Ledger.check.
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import * as M from "./model.js"
import { diverge } from "./system.js"

export interface Bought {
  readonly id: string
  readonly status: string
  readonly priceCents: number
  readonly createdAt: string
}

export interface Hold {
  readonly sagaId: string
  /** What the saga's escrow account holds now. */
  readonly heldCents: number
  /** The purchase the saga recorded (settled or failed), once it did. */
  readonly transactionId: string | null
}

/** What was already seen in earlier steps of the run: the windows' totals, purchases, holds. */
export interface Seen {
  readonly totals: Map<
    number,
    {
      readonly day: number
      readonly month: number
      readonly today: number
      readonly thisMonth: number
      readonly held: number
    }
  >
  readonly txs: Set<string>
  /** Sagas whose escrow was seen held: their settled purchase is money already counted. */
  readonly held: Set<string>
}

export const newSeen = (): Seen => ({ totals: new Map(), txs: new Set(), held: new Set() })

/**
 * Agent `agent`'s promises at `now`: `bought` are its purchases as buyer, `holds` its sagas'
 * escrow, `policy` what its owner set. Throws a divergence naming the promise that was broken.
 */
export const checkOwnersPromises = (
  where: string,
  seen: Seen,
  agent: number,
  now: number,
  policy: M.Policy,
  bought: ReadonlyArray<Bought>,
  holds: ReadonlyArray<Hold>
) => {
  const day = M.dayOf(now)
  const month = M.monthStartDay(now)
  let today = 0
  let thisMonth = 0
  for (const t of bought) {
    if (t.status !== "completed") continue
    const d = M.dayOf(Date.parse(t.createdAt))
    if (d === day) today += t.priceCents
    if (d >= month && d <= day) thisMonth += t.priceCents
  }
  const heldCents = holds.reduce((sum, h) => sum + h.heldCents, 0)
  const perTx = policy.perTransactionLimitCents
  // New money committed in this step: a new completed purchase (not a settled hold) or a new hold.
  const settledHolds = new Set(holds.filter((h) => seen.held.has(h.sagaId)).map((h) => h.transactionId))
  for (const t of bought) {
    if (t.status !== "completed" || seen.txs.has(t.id)) continue
    seen.txs.add(t.id)
    if (!settledHolds.has(t.id) && perTx !== null && t.priceCents > perTx)
      throw diverge(`${where}: agent ${agent} charged above its per-transaction limit`, {
        transaction: t,
        perTransactionLimitCents: perTx
      })
  }
  for (const h of holds) {
    if (h.heldCents === 0 || seen.held.has(h.sagaId)) continue
    seen.held.add(h.sagaId)
    if (perTx !== null && h.heldCents > perTx)
      throw diverge(`${where}: agent ${agent}'s saga escrow above its per-transaction limit`, {
        hold: h,
        perTransactionLimitCents: perTx
      })
  }
  const before = seen.totals.get(agent)
  const spentToday = today + heldCents
  const spentMonth = thisMonth + heldCents
  seen.totals.set(agent, { day, month, today: spentToday, thisMonth: spentMonth, held: heldCents })
  // Only a step that moved money up must land within the limits (an owner may lower a limit below
  // what was spent); in a new window, what was already held carries over as committed before.
  const todayBefore = before === undefined ? 0 : before.day === day ? before.today : before.held
  const monthBefore = before === undefined ? 0 : before.month === month ? before.thisMonth : before.held
  const detail = {
    completedToday: today,
    completedThisMonth: thisMonth,
    heldCents,
    policy: { daily: policy.dailyLimitCents, monthly: policy.monthlyLimitCents }
  }
  if (policy.dailyLimitCents !== null && spentToday > policy.dailyLimitCents && spentToday > todayBefore) {
    throw diverge(`${where}: agent ${agent}'s completed + held spend today is above its daily limit`, detail)
  }
  if (policy.monthlyLimitCents !== null && spentMonth > policy.monthlyLimitCents && spentMonth > monthBefore) {
    throw diverge(`${where}: agent ${agent}'s completed + held spend this month is above its monthly limit`, detail)
  }
}

/**
 * The ledger by plain SQL over its postings: each of the run's accounts in `expected` (account →
 * cents) holds what the model says, its kept balance (ledger_account_balances) equals its postings,
 * the fees moved by the model's delta from `fees.base`; and, when
 * `whole`, all postings sum to zero and no wallet, escrow or platform account is below zero.
 */
export const checkLedgerSql = (
  sql: SqlClient.SqlClient,
  where: string,
  expected: ReadonlyMap<string, number>,
  fees: { readonly account: string; readonly base: number; readonly delta: number },
  whole: boolean
) =>
  Effect.gen(function* () {
    const accounts = [...expected.keys(), fees.account]
    const rows = yield* sql<{ readonly account: string; readonly balance: string }>`
      SELECT account, SUM(amount)::text AS balance FROM ledger_postings WHERE ${sql.in("account", accounts)} GROUP BY account`
    const real = new Map(rows.map((r) => [r.account, Number(r.balance)]))
    for (const [account, cents] of expected) {
      if ((real.get(account) ?? 0) !== cents)
        throw diverge(`${where}: SQL: ${account}'s postings`, { sql: real.get(account) ?? 0, model: cents })
    }
    // The kept balances (base row plus credit shards: what a debit is checked against) agree with the postings.
    const kept = yield* sql<{ readonly account: string; readonly balance: string }>`
      SELECT account, balance::text AS balance FROM ledger_account_balances WHERE ${sql.in("account", accounts)}`
    for (const k of kept) {
      if (Number(k.balance) !== (real.get(k.account) ?? 0))
        throw diverge(`${where}: SQL: ${k.account}'s kept balance is not its postings`, {
          kept: Number(k.balance),
          postings: real.get(k.account) ?? 0
        })
    }
    const feeDelta = (real.get(fees.account) ?? 0) - fees.base
    if (feeDelta !== fees.delta)
      throw diverge(`${where}: SQL: ${fees.account}'s postings moved`, { sql: feeDelta, model: fees.delta })
    if (!whole) return
    const [total] = yield* sql<{
      readonly total: string
    }>`SELECT COALESCE(SUM(amount), 0)::text AS total FROM ledger_postings`
    if (Number(total.total) !== 0)
      throw diverge(`${where}: SQL: the ledger's postings sum to ${total.total}, not 0`, {})
    const negative = yield* sql<{ readonly account: string; readonly balance: string }>`
      SELECT account, SUM(amount)::text AS balance FROM ledger_postings
      WHERE account LIKE 'wallet:%' OR account LIKE 'escrow:%' OR account LIKE 'platform:%'
      GROUP BY account HAVING SUM(amount) < 0`
    if (negative.length > 0) throw diverge(`${where}: SQL: accounts below zero`, negative)
  }).pipe(Effect.orDie)

/** The fee account's postings now (the base a run's fee delta is measured from). */
export const sqlBalance = (sql: SqlClient.SqlClient, account: string) =>
  Effect.map(
    sql<{
      readonly balance: string
    }>`SELECT COALESCE(SUM(amount), 0)::text AS balance FROM ledger_postings WHERE account = ${account}`,
    ([r]) => Number(r.balance)
  ).pipe(Effect.orDie)
