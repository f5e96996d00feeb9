// In-memory settlement writer: the ledger, commerce and event stores in turn, inside the caller's
// unit of work (the memory engine's write lock and undo journal make them one).
import { Effect, Layer } from "effect"
import { EventStore } from "../../../services/Events.js"
import { LedgerStore } from "../../../services/Ledger.js"
import { CommerceStore, SettlementStore } from "../../../services/Settlement.js"

export const MemorySettlementStore = Layer.effect(
  SettlementStore,
  Effect.gen(function* () {
    const ledger = yield* LedgerStore
    const commerce = yield* CommerceStore
    const events = yield* EventStore
    return {
      write: ({ entry, tx, delivery, events: made }) =>
        Effect.gen(function* () {
          if (entry !== null) yield* ledger.append(entry)
          yield* commerce.insertTransaction(tx, delivery)
          if (made.length > 0) yield* events.appendMany(made)
        })
    }
  })
)
