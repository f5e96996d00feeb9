// Ledger: the one double-entry book of every credit movement. Entries sum to zero; balances are
// kept beside the postings in the same unit of work and can be re-derived and checked.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { InvalidInput, type StorageUnavailable } from "../../schema/platform/errors.js"
import {
  type EntryKind,
  InsufficientFunds,
  JournalEntry,
  mayGoNegative,
  type Posting
} from "../../schema/ledger/ledger.js"
import { Ids, Transactor } from "../platform/Db.js"

export interface LedgerCheck {
  /** Sum of every posting ever made (must be 0). */
  readonly totalCents: number
  /** Accounts whose stored balance differs from the sum of their postings. */
  readonly mismatches: ReadonlyArray<{ readonly account: string; readonly stored: number; readonly derived: number }>
  /** Constrained accounts below zero. */
  readonly negative: ReadonlyArray<string>
  readonly ok: boolean
}

/** Storage port for the ledger. */
export interface LedgerStoreService {
  /** Balances of the accounts, locked for this unit of work (rows created at 0 when missing). */
  readonly lockBalances: (
    accounts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, number>, StorageUnavailable>
  /**
   * Writes the entry and its postings and adds each posting to its account's balance (a row made
   * when missing), inside the caller's unit of work. Balances move by their postings, not to a
   * value read earlier, so an account that was not locked (a credit) is still exact.
   */
  readonly append: (entry: JournalEntry) => Effect.Effect<void, StorageUnavailable>
  readonly balance: (account: string) => Effect.Effect<number, StorageUnavailable>
  readonly entriesFor: (
    account: string,
    options: { readonly limit: number; readonly before?: string }
  ) => Effect.Effect<ReadonlyArray<JournalEntry>, StorageUnavailable>
  readonly entriesByReference: (reference: string) => Effect.Effect<ReadonlyArray<JournalEntry>, StorageUnavailable>
  readonly check: Effect.Effect<LedgerCheck, StorageUnavailable>
}

export class LedgerStore extends Context.Service<LedgerStore, LedgerStoreService>()("agent-commerce/LedgerStore") {}

/** One balanced entry to post. */
export interface EntryInput {
  readonly kind: EntryKind
  readonly reference: string
  readonly memo?: string
  readonly postings: ReadonlyArray<Posting>
}

export interface LedgerService {
  /**
   * Checks one balanced entry and locks what the check read, without writing it (the caller
   * writes it in the same unit of work). Fails with InsufficientFunds when a wallet or escrow
   * account would go below zero, InvalidInput when it does not balance.
   */
  readonly prepare: (
    input: EntryInput & { readonly locked?: ReadonlyMap<string, number> }
  ) => Effect.Effect<JournalEntry, InsufficientFunds | InvalidInput | StorageUnavailable>
  /** Posts one balanced entry atomically (prepare, then append). */
  readonly post: (
    input: EntryInput
  ) => Effect.Effect<JournalEntry, InsufficientFunds | InvalidInput | StorageUnavailable>
  /** Moves `amount` from one account to another as a single two-posting entry. */
  readonly transfer: (input: {
    readonly kind: EntryKind
    readonly reference: string
    readonly memo?: string
    readonly from: string
    readonly to: string
    readonly amount: number
  }) => Effect.Effect<JournalEntry, InsufficientFunds | InvalidInput | StorageUnavailable>
  readonly balance: (account: string) => Effect.Effect<number, StorageUnavailable>
  readonly entriesFor: LedgerStoreService["entriesFor"]
  readonly entriesByReference: LedgerStoreService["entriesByReference"]
  readonly check: Effect.Effect<LedgerCheck, StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* LedgerStore
  const ids = yield* Ids
  const { atomically } = yield* Transactor

  /**
   * Checks one balanced entry and locks what the check read, without writing it: the caller
   * writes `entry` (LedgerStore.append, or a store that writes it with more in one statement) in
   * the same unit of work. Only accounts that the entry debits and that may not go negative are
   * locked and checked; credited accounts (a seller's wallet, the platform's fees) are not
   * locked here, so buyers of one seller do not queue on its row: the write adds to their
   * balance (on Postgres in one of the account's credit shard rows, docs/money.md) and holds
   * that row only from the write to commit.
   * Fails with InsufficientFunds when a wallet or escrow account would go below zero (nothing is
   * written), InvalidInput when it does not balance.
   */
  const prepare = Effect.fnUntraced(function* (
    input: EntryInput & {
      /**
       * Accounts the caller has already locked in this unit of work, with their balance read
       * under that lock (Wallet.lockForPurchase): checked against it, not locked again.
       */
      readonly locked?: ReadonlyMap<string, number>
    }
  ) {
    // Normalise: one posting per account, zero postings dropped (both stores then agree).
    const merged = new Map<string, number>()
    for (const p of input.postings) merged.set(p.account, (merged.get(p.account) ?? 0) + p.amount)
    const postings = [...merged].filter(([, amount]) => amount !== 0).map(([account, amount]) => ({ account, amount }))
    const sum = postings.reduce((s, p) => s + p.amount, 0)
    if (postings.length < 2 || sum !== 0 || input.postings.some((p) => !Number.isSafeInteger(p.amount))) {
      return yield* Effect.fail(
        new InvalidInput({
          message: `ledger entry must have integer postings summing to zero (sum ${sum})`,
          field: "postings"
        })
      )
    }
    const checked = postings
      .filter((p) => p.amount < 0 && !mayGoNegative(p.account))
      .sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0))
    if (checked.length > 0) {
      const toLock = checked.map((p) => p.account).filter((a) => !input.locked?.has(a))
      const before = toLock.length > 0 ? new Map(yield* store.lockBalances(toLock)) : new Map<string, number>()
      for (const [account, balance] of input.locked ?? []) before.set(account, balance)
      for (const p of checked) {
        const had = before.get(p.account) ?? 0
        const balance = had + p.amount
        if (balance < 0) {
          return yield* Effect.fail(
            new InsufficientFunds({
              message: `${p.account} has ${had} cents; ${-p.amount} needed`,
              account: p.account,
              balanceCents: had,
              requiredCents: -p.amount,
              missingCents: -balance
            })
          )
        }
      }
    }
    return JournalEntry.make({
      id: yield* ids.make("je"),
      kind: input.kind,
      reference: input.reference,
      memo: input.memo ?? "",
      postings,
      createdAt: new Date(yield* Clock.currentTimeMillis).toISOString()
    })
  })

  /**
   * Posts one balanced entry atomically (prepare, then append). Fails with InsufficientFunds when
   * a wallet or escrow account would go below zero (nothing is written), InvalidInput when it
   * does not balance.
   */
  const post = (input: EntryInput) =>
    atomically(Effect.tap(prepare(input), (entry) => store.append(entry))).pipe(
      traced("Ledger.post", { attributes: { kind: input.kind } })
    )

  /** Moves `amount` from one account to another as a single two-posting entry. */
  const transfer = (input: Parameters<LedgerService["transfer"]>[0]) =>
    post({
      kind: input.kind,
      reference: input.reference,
      memo: input.memo,
      postings: [
        { account: input.from, amount: -input.amount },
        { account: input.to, amount: input.amount }
      ]
    })

  return {
    prepare,
    post,
    transfer,
    balance: (account: string) => store.balance(account),
    entriesFor: store.entriesFor,
    entriesByReference: store.entriesByReference,
    check: store.check.pipe(traced("Ledger.check"))
  } satisfies LedgerService
})

export class Ledger extends Context.Service<Ledger, LedgerService>()("agent-commerce/Ledger") {
  static readonly layer = Layer.effect(Ledger, make)
}
