// In-memory settlement writer: the ledger, commerce and event stores in turn, inside the caller's
// unit of work (the memory engine's write lock and undo journal make them one).
import { Effect, Layer } from "effect"
import { CatalogStore } from "../../services/commerce/CatalogStore.js"
import { EventStore } from "../../services/events/EventStore.js"
import { WalletStore } from "../../services/wallet/WalletStore.js"
import { LedgerStore } from "../../services/ledger/Ledger.js"
import { PurchaseStore } from "../../services/purchases/PurchaseStore.js"
import { SettlementStore } from "../../services/purchases/SettlementStore.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"

type Settled = Parameters<SettlementStore["Service"]["write"]>[0]

export const MemorySettlementStore = Layer.effect(
  SettlementStore,
  Effect.gen(function* () {
    const ledger = yield* LedgerStore
    const commerce = yield* PurchaseStore
    const events = yield* EventStore
    const catalog = yield* CatalogStore
    const wallets = yield* WalletStore
    return {
      // Effect.fnUntraced: each generator function is made once, not per purchase (see MemoryDb.ts on why).
      open: Effect.fnUntraced(function* ({
        wallet,
        serviceId
      }: {
        readonly wallet: WalletRecord
        readonly serviceId: string
      }) {
        const service = yield* catalog.get(serviceId)
        const locked = yield* wallets.lockForPurchase(wallet)
        return { ...locked, service }
      }),
      write: Effect.fnUntraced(function* ({ entry, tx, delivery, events: made, replacesPending }: Settled) {
        if (entry !== null) yield* ledger.append(entry)
        if (replacesPending === true) yield* commerce.finishPending(tx, delivery)
        else yield* commerce.insertTransaction(tx, delivery)
        if (made.length > 0) yield* events.appendMany(made)
      })
    }
  })
)
