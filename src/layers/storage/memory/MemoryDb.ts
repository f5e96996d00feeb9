// In-memory storage engine: tables as Maps, one write lock, and an undo journal for rollback.
import { Context, Effect, Layer, Semaphore } from "effect"
import { Transactor } from "../../../services/platform/Db.js"

type Undo = () => void

// Writers on the purchase path are `Effect.fnUntraced(function* (…) {…})`, not `(…) => Effect.gen(function* () {…})`:
// a generator function made per call gets its own prototype and hidden class, and V8 keeps hidden
// classes in the old generation, so each call leaves an old-to-young pointer that carries the
// call's garbage through two scavenges into the old generation. The memory store's data lives in
// the same heap, and every major collection that garbage triggers marks all of it: that, not a
// walk of the history, is what made the memory server slower the longer it ran (docs/performance.md,
// "Memory soak").

/** The journal of the transaction the current fiber runs in (undefined outside one). */
const currentJournal = Context.Reference<Array<Undo> | undefined>("agent-commerce/memory/currentJournal", {
  defaultValue: () => undefined
})

/**
 * A table. Reads are plain; writes inside `atomically` record how to undo themselves, so a failed
 * unit of work leaves no trace. Values must be treated as immutable (replace, never mutate).
 */
export class MemTable<K, V> {
  readonly rows = new Map<K, V>()

  get(key: K): V | undefined {
    return this.rows.get(key)
  }
  values(): IterableIterator<V> {
    return this.rows.values()
  }
  get size(): number {
    return this.rows.size
  }
  /** Write a row; returns an effect so the undo entry lands in the caller's journal. */
  set(key: K, value: V): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        if (journal) {
          const had = this.rows.has(key)
          const previous = this.rows.get(key)
          journal.push(() => (had ? this.rows.set(key, previous as V) : this.rows.delete(key)))
        }
        this.rows.set(key, value)
      })
    )
  }
  /**
   * Appends to an array-valued row in place (O(1): insertSorted at the end); the undo removes it. For append-only indexes
   * (ledger postings per account), where copying the array on every write would be O(n).
   */
  append<I>(this: MemTable<K, Array<I>>, key: K, item: I): Effect.Effect<void> {
    return this.insertSorted(key, item, () => false)
  }
  /**
   * Inserts into an array-valued row kept sorted by `before` (true when `a` sorts before `b`): the
   * position is found from the end, so appending in order is O(1); the undo removes it again.
   */
  insertSorted<I>(this: MemTable<K, Array<I>>, key: K, item: I, before: (a: I, b: I) => boolean): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        const list = this.rows.get(key)
        if (!list) {
          // A new row holds just its item: `[]` grown by one would reserve 17 slots (~150 bytes), and
          // some rows stay that small (the ledger's per-reference lists: one per purchase).
          this.rows.set(key, [item])
          journal?.push(() => this.rows.delete(key))
          return
        }
        let at = list.length
        while (at > 0 && before(item, list[at - 1])) at--
        list.splice(at, 0, item)
        const l = list
        journal?.push(() => void l.splice(at, 1))
      })
    )
  }
  /**
   * Removes the first occurrence of `item` from an array-valued row in place (found from the front,
   * where queues take their items); the undo puts it back at the same position.
   */
  removeItem<I>(this: MemTable<K, Array<I>>, key: K, item: I): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        const list = this.rows.get(key)
        const at = list ? list.indexOf(item) : -1
        if (!list || at < 0) return
        list.splice(at, 1)
        journal?.push(() => void list.splice(at, 0, item))
      })
    )
  }
  /**
   * Inserts `item` into the rows of each key, each kept sorted by `compare` (binary search; a row is
   * made when missing): one journal entry for all of them, whose undo takes it out again.
   */
  insertOrderedAll<I>(
    this: MemTable<K, Array<I>>,
    keys: ReadonlyArray<K>,
    item: I,
    compare: (a: I, b: I) => number
  ): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        for (const key of keys) this.placeSorted(key, item, compare)
        journal?.push(() => {
          for (const key of keys) this.takeSorted(key, item, compare)
        })
      })
    )
  }
  /** Removes `item` (in them) from the rows of each key kept by insertOrderedAll (an emptied row is dropped); the undo puts it back. */
  removeOrderedAll<I>(
    this: MemTable<K, Array<I>>,
    keys: ReadonlyArray<K>,
    item: I,
    compare: (a: I, b: I) => number
  ): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        const removed = keys.filter((key) => this.takeSorted(key, item, compare))
        journal?.push(() => {
          for (const key of removed) this.placeSorted(key, item, compare)
        })
      })
    )
  }
  /** Puts `item` into `key`'s row at its sorted place, making the row when missing (no journal entry). */
  private placeSorted<I>(this: MemTable<K, Array<I>>, key: K, item: I, compare: (a: I, b: I) => number): void {
    const list = this.rows.get(key)
    if (!list) this.rows.set(key, [item])
    else list.splice(lowerBound(list, item, compare), 0, item)
  }
  /** Takes the item `compare` finds equal to `item` out of `key`'s row, dropping an emptied row; false when absent (no journal entry). */
  private takeSorted<I>(this: MemTable<K, Array<I>>, key: K, item: I, compare: (a: I, b: I) => number): boolean {
    const list = this.rows.get(key)
    if (!list) return false
    const at = lowerBound(list, item, compare)
    if (at >= list.length || compare(list[at], item) !== 0) return false
    list.splice(at, 1)
    if (list.length === 0) this.rows.delete(key)
    return true
  }
  /**
   * Inserts into an array-valued row kept sorted by `compare`, at the position a binary search
   * finds (for rows written in any order, where insertSorted's walk from the end would be O(n));
   * the undo removes it again.
   */
  insertOrdered<I>(this: MemTable<K, Array<I>>, key: K, item: I, compare: (a: I, b: I) => number): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        const list = this.rows.get(key)
        if (!list) {
          this.rows.set(key, [item])
          journal?.push(() => this.rows.delete(key))
          return
        }
        const at = lowerBound(list, item, compare)
        list.splice(at, 0, item)
        const l = list
        journal?.push(() => void l.splice(at, 1))
      })
    )
  }
  /** Removes the item that `compare` finds equal to `item` from a row kept by insertOrdered; the undo puts it back. */
  removeOrdered<I>(this: MemTable<K, Array<I>>, key: K, item: I, compare: (a: I, b: I) => number): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        const list = this.rows.get(key)
        if (!list) return
        const at = lowerBound(list, item, compare)
        if (at >= list.length || compare(list[at], item) !== 0) return
        const [removed] = list.splice(at, 1)
        journal?.push(() => void list.splice(at, 0, removed))
      })
    )
  }
  delete(key: K): Effect.Effect<void> {
    return Effect.flatMap(currentJournal, (journal) =>
      Effect.sync(() => {
        if (!this.rows.has(key)) return
        const previous = this.rows.get(key) as V
        journal?.push(() => this.rows.set(key, previous))
        this.rows.delete(key)
      })
    )
  }
}

/** The first position in `list` (sorted by `compare`) whose item does not sort before `item`. */
export const lowerBound = <I>(list: ReadonlyArray<I>, item: I, compare: (a: I, b: I) => number): number => {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compare(list[mid], item) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class MemoryDb extends Context.Service<
  MemoryDb,
  {
    readonly table: <K, V>(name: string) => MemTable<K, V>
    readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>()("agent-commerce/MemoryDb") {
  static readonly layer = Layer.effect(
    MemoryDb,
    Effect.gen(function* () {
      const lock = yield* Semaphore.make(1)
      const tables = new Map<string, MemTable<unknown, unknown>>()
      const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.flatMap(currentJournal, (outer) => {
          // Nested: join the outer unit of work.
          if (outer) return effect
          return lock.withPermits(1)(
            Effect.suspend(() => {
              const journal: Array<Undo> = []
              return effect.pipe(
                Effect.provideService(currentJournal, journal),
                Effect.onExit((exit) =>
                  exit._tag === "Success"
                    ? Effect.void
                    : Effect.sync(() => {
                        for (let i = journal.length - 1; i >= 0; i--) journal[i]()
                      })
                )
              )
            })
          )
        })
      return {
        table: <K, V>(name: string) => {
          let t = tables.get(name)
          if (!t) {
            t = new MemTable<unknown, unknown>()
            tables.set(name, t)
          }
          return t as unknown as MemTable<K, V>
        },
        atomically
      }
    })
  )
}

export const MemoryTransactor = Layer.effect(
  Transactor,
  Effect.map(MemoryDb, (db) => ({ atomically: db.atomically }))
)
