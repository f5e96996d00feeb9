// In-memory settlement writer: the ledger, purchase, order and event stores in turn, inside the
// caller's unit of work (the memory engine's write lock and undo journal make them one).
import { Effect, Layer } from "effect"
import { escrowAccount } from "../../schema/ledger/ledger.js"
import { CatalogStore } from "../../services/commerce/CatalogStore.js"
import { EventStore } from "../../services/events/EventStore.js"
import { WalletStore } from "../../services/wallet/WalletStore.js"
import { KeysStore } from "../../services/keys/KeysStore.js"
import { LedgerStore } from "../../services/ledger/Ledger.js"
import { OrderStore } from "../../services/purchases/OrderStore.js"
import { PurchaseStore } from "../../services/purchases/PurchaseStore.js"
import { SettlementStore, type SettlementWrite } from "../../services/purchases/SettlementStore.js"
import type { WalletRecord } from "../../schema/commerce/wallets.js"

export const MemorySettlementStore = Layer.effect(
  SettlementStore,
  Effect.gen(function* () {
    const ledger = yield* LedgerStore
    const purchases = yield* PurchaseStore
    const orders = yield* OrderStore
    const events = yield* EventStore
    const catalog = yield* CatalogStore
    const wallets = yield* WalletStore
    const keys = yield* KeysStore
    return SettlementStore.of({
      // Effect.fnUntraced: each generator function is made once, not per purchase (see MemoryDb.ts on why).
      open: Effect.fnUntraced(function* ({
        wallet,
        serviceId
      }: {
        readonly wallet: WalletRecord
        readonly serviceId: string
      }) {
        const service = yield* catalog.get(serviceId)
        const seller = service === undefined ? undefined : yield* keys.getAgent(service.sellerAgentId)
        const locked = yield* wallets.lockForPurchase(wallet)
        return { ...locked, service, sellerAccountId: seller?.accountId }
      }),
      openOrder: Effect.fnUntraced(function* (orderId: string) {
        const order = yield* orders.getForUpdate(orderId)
        if (order === undefined) return undefined
        return { order, escrowCents: yield* ledger.balance(escrowAccount(orderId)) }
      }),
      write: Effect.fnUntraced(function* ({ entry, transaction, order, events: made }: SettlementWrite) {
        if (entry !== null) yield* ledger.append(entry)
        if (transaction !== undefined) {
          const { tx, delivery, replacesPending } = transaction
          if (delivery === null) yield* purchases.insertPending(tx)
          else if (replacesPending) yield* purchases.finishPending(tx, delivery)
          else yield* purchases.insertTransaction(tx, delivery)
        }
        if (order !== undefined) yield* "place" in order ? orders.insert(order.place) : orders.close(order.close)
        if (made.length > 0) yield* events.appendMany(made)
      })
    })
  })
)
