// The memory catalogue's indexes, kept in step with every write of a service: the id orders (all,
// per category, per seller), the search text and its trigrams, the price spans and the kept
// ranking, and the walks a page takes over them (the memory counterpart of the SQL indexes).
import { Effect } from "effect"
import { rankOf } from "../../schema/commerce/filters.js"
import { searchText, type ServiceRecord } from "../../schema/commerce/services.js"
import { lowerBound } from "../storage/memory/MemoryDb.js"
import type { PriceEntry, RankEntry, Tables } from "../storage/memory/commerceTables.js"

/** The ⌈0.95·n⌉-th smallest value (Postgres percentile_disc(0.95) gives the same). */
export const p95 = (values: ReadonlyArray<number>): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil(0.95 * sorted.length) - 1]
}

const byId = (a: string, b: string) => a < b

/**
 * A catalogue page reads candidates from the price index instead of walking the id order when
 * there are at most this many (and fewer than the rows left to walk).
 */
export const CATALOGUE_CANDIDATES = 2048

const byMinThenId = (a: PriceEntry, b: PriceEntry) => a.min - b.min || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
/** The largest span (max − min) bucket `b` holds: 0, 1, 3, 7, … (2^b − 1). */
const spanBound = (b: number) => 2 ** b - 1
const spanBucket = (span: number) => {
  let b = 0
  while (span > spanBound(b)) b++
  return b
}
const priceEntry = (r: ServiceRecord): PriceEntry | undefined =>
  r.status !== "active" || r.tiers.length === 0
    ? undefined
    : {
        min: Math.min(...r.tiers.map((x) => x.priceCents)),
        max: Math.max(...r.tiers.map((x) => x.priceCents)),
        id: r.id
      }

export const byRankThenId = (a: RankEntry, b: RankEntry) => b.rank - a.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const rankEntry = (r: ServiceRecord): RankEntry | undefined =>
  r.status === "active" ? { rank: rankOf(r), id: r.id } : undefined

/** Keeps the ranking (`all` and the service's category) in step with a write of the service or its rating. */
export const rankService = Effect.fnUntraced(function* (
  t: Tables,
  before: ServiceRecord | undefined,
  after: ServiceRecord
) {
  const old = before === undefined ? undefined : rankEntry(before)
  const now = rankEntry(after)
  if (old?.rank === now?.rank && before?.category === after.category) return
  if (old !== undefined)
    for (const key of ["all", `category|${before!.category}`])
      yield* t.serviceRanking.removeOrdered(key, old, byRankThenId)
  if (now !== undefined)
    for (const key of ["all", `category|${after.category}`])
      yield* t.serviceRanking.insertOrdered(key, now, byRankThenId)
})

/** Every 3-character window of a search text (what any `q` of 3 or more characters it contains also has). */
export const trigramsOf = (text: string): Set<string> => {
  const out = new Set<string>()
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3))
  return out
}

/** Keeps the catalogue's ordered indexes, search text, trigram and price indexes in step with a service's write. */
export const indexService = Effect.fnUntraced(function* (
  t: Tables,
  before: ServiceRecord | undefined,
  after: ServiceRecord
) {
  if (before === undefined) yield* t.serviceOrder.insertSorted("all", after.id, byId)
  for (const key of ["category", "seller"] as const) {
    const of = (r: ServiceRecord) => `${key}|${key === "category" ? r.category : r.sellerAgentId}`
    if (before !== undefined && of(before) === of(after)) continue
    if (before !== undefined) yield* t.serviceOrder.removeItem(of(before), before.id)
    yield* t.serviceOrder.insertSorted(of(after), after.id, byId)
  }
  const previousText = t.serviceSearch.get(after.id)
  const text = searchText(after)
  if (previousText !== text) yield* t.serviceSearch.set(after.id, text)
  // Trigrams of listed services only (as the partial SQL index): the difference is written.
  const had =
    before !== undefined && before.status === "active" && previousText !== undefined
      ? trigramsOf(previousText)
      : new Set<string>()
  const has = after.status === "active" ? trigramsOf(text) : new Set<string>()
  const gone = [...had].filter((x) => !has.has(x))
  const added = [...has].filter((x) => !had.has(x))
  if (gone.length > 0) yield* t.serviceTrigrams.removeOrderedAll(gone, after.id, compareIds)
  if (added.length > 0) yield* t.serviceTrigrams.insertOrderedAll(added, after.id, compareIds)
  yield* rankService(t, before, after)
  const oldEntry = before === undefined ? undefined : priceEntry(before)
  const newEntry = priceEntry(after)
  if (oldEntry?.min !== newEntry?.min || oldEntry?.max !== newEntry?.max) {
    if (oldEntry !== undefined)
      yield* t.servicePrices.removeOrdered(spanBucket(oldEntry.max - oldEntry.min), oldEntry, byMinThenId)
    if (newEntry !== undefined)
      yield* t.servicePrices.insertOrdered(spanBucket(newEntry.max - newEntry.min), newEntry, byMinThenId)
  }
})

/**
 * Ids of listed services whose tiers can overlap [low, high] (some tier ≥ low and some ≤ high ⟺
 * max ≥ low and min ≤ high): per span bucket, the entries with min in [low − bound, high], those
 * with max ≥ low kept. Undefined once more than `budget` entries would be read (walk the id order).
 */
export const priceCandidates = (t: Tables, low: number, high: number, budget: number): Array<string> | undefined => {
  const out: Array<string> = []
  let read = 0
  for (const [bucket, entries] of t.servicePrices.rows) {
    const from = low - spanBound(bucket)
    for (
      let i = lowerBound(entries, { min: from, max: from, id: "" }, byMinThenId);
      i < entries.length && entries[i].min <= high;
      i++
    ) {
      if (++read > budget) return undefined
      if (entries[i].max >= low) out.push(entries[i].id)
    }
  }
  return out
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The id-ordered list a page walks: the narrowest of the seller, category or whole catalogue's
 * (`ids`) and, for a `q` of 3+ characters, its rarest trigram's listed services — which hold every
 * match, so walking them from the cursor and checking the whole filter stops after about a page
 * when q's words are common and reads no more than q's rarest trigram when they are rare (a
 * trigram no listed service has: nothing to walk).
 */
export const walkedIds = (t: Tables, ids: ReadonlyArray<string>, q: string | undefined): ReadonlyArray<string> => {
  if (q === undefined || q.length < 3) return ids
  let rarest = ids
  for (const tri of trigramsOf(q)) {
    const posting = t.serviceTrigrams.get(tri)
    if (posting === undefined) return []
    if (posting.length < rarest.length) rarest = posting
  }
  return rarest
}

/** First position in an id-ordered index whose id is greater than `afterId`. */
export const firstAfter = (ids: ReadonlyArray<string>, afterId: string | undefined) => {
  if (afterId === undefined) return 0
  let lo = 0
  let hi = ids.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ids[mid] <= afterId) lo = mid + 1
    else hi = mid
  }
  return lo
}
