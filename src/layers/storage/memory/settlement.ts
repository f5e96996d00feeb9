// In-memory settlement writer: the ledger, commerce and event stores in turn, inside the caller's
// unit of work (the memory engine's write lock and undo journal make them one).
import { Effect, Layer } from "effect"
import { CatalogStore } from "../../../services/Catalog.js"
import { EventStore } from "../../../services/Events.js"
import { WalletStore } from "../../../services/Wallet.js"
import { LedgerStore } from "../../../services/Ledger.js"
import { CommerceStore, SettlementStore } from "../../../services/Settlement.js"

export const MemorySettlementStore = Layer.effect(
  SettlementStore,
  Effect.gen(function* () {
    const ledger = yield* LedgerStore
    const commerce = yield* CommerceStore
    const events = yield* EventStore
    const catalog = yield* CatalogStore
    const wallets = yield* WalletStore
    return {
      open: ({ wallet, serviceId }) =>
        Effect.gen(function* () {
          const service = yield* catalog.get(serviceId)
          const locked = yield* wallets.lockForPurchase(wallet)
          return { ...locked, service }
        }),
      write: ({ entry, tx, delivery, events: made }) =>
        Effect.gen(function* () {
          if (entry !== null) yield* ledger.append(entry)
          yield* commerce.insertTransaction(tx, delivery)
          if (made.length > 0) yield* events.appendMany(made)
        })
    }
  })
)
