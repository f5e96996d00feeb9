// The purchase domain's OrderOwners port, answered by the saga: an order a saga's deliver step placed
// has ended (the seller answered, or the deadline passed), so the saga is due now (its next run is
// set to the present in the same unit of work): a saga worker in any process takes the answer on its
// next tick, and a crash between the answer and the wake cannot happen.
import { Clock, Effect, Layer } from "effect"
import { sagaOf } from "../../schema/orders/orders.js"
import { OrderOwners } from "../purchases/OrderOwners.js"
import { SagaStore } from "./SagaStore.js"

export const SagaOrderOwnersLive = Layer.effect(
  OrderOwners,
  Effect.map(SagaStore, (store) =>
    OrderOwners.of({
      ended: Effect.fnUntraced(function* (order) {
        const sagaId = sagaOf(order)
        if (sagaId === null) return
        const saga = yield* store.getForUpdate(sagaId)
        if (saga === undefined || saga.status !== "running") return
        yield* store.update({ ...saga, nextRunAt: new Date(yield* Clock.currentTimeMillis).toISOString() })
      })
    })
  )
)
