// In-memory DisputeStore: disputes, one per transaction, with each agent's ordered index; a
// resolution moves the loser's disputes-lost counter in the same unit of work.
import { Effect, Layer } from "effect"
import { Conflict } from "../../schema/platform/errors.js"
import { DisputeStore } from "../../services/commerce/DisputeStore.js"
import { disputeDeltas } from "../../schema/reputation/counters.js"
import { addCounterDeltas } from "../storage/memory/counters.js"
import { commerceTables, newestFirst, olderBy } from "../storage/memory/commerceTables.js"

export const MemoryDisputeStore = Layer.effect(
  DisputeStore,
  Effect.map(commerceTables, (t) => ({
    insert: (d) =>
      t.disputeByTx.get(d.transactionId)
        ? Effect.fail(
            new Conflict({ message: `transaction ${d.transactionId} already has a dispute`, state: "disputed" })
          )
        : Effect.all(
            [
              t.disputes.set(d.id, d),
              t.disputeByTx.set(d.transactionId, d.id),
              t.disputesByAgent.insertSorted(
                d.buyerAgentId,
                d.id,
                olderBy(d, (id) => t.disputes.get(id))
              ),
              d.sellerAgentId !== d.buyerAgentId
                ? t.disputesByAgent.insertSorted(
                    d.sellerAgentId,
                    d.id,
                    olderBy(d, (id) => t.disputes.get(id))
                  )
                : Effect.void,
              addCounterDeltas(t, disputeDeltas(d, null, d.status))
            ],
            { discard: true }
          ),
    get: (id) => Effect.sync(() => t.disputes.get(id)),
    lock: (id) => Effect.sync(() => t.disputes.get(id)),
    update: (d) =>
      Effect.suspend(() => {
        const before = t.disputes.get(d.id)
        return Effect.andThen(
          t.disputes.set(d.id, d),
          before === undefined ? Effect.void : addCounterDeltas(t, disputeDeltas(d, before.status, d.status))
        )
      }),
    listDue: (now, limit) =>
      Effect.sync(() =>
        [...t.disputes.values()]
          .filter(
            (d) =>
              (d.status === "open" && d.respondBy <= now) ||
              (d.status === "under_review" && d.reviewDueAt !== null && d.reviewDueAt <= now)
          )
          .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))
          .slice(0, limit)
          .map((d) => d.id)
      ),
    listForAgent: (agentId, limit, before) =>
      Effect.sync(() =>
        newestFirst(
          t.disputesByAgent.get(agentId),
          (id) => t.disputes.get(id)!,
          () => true,
          limit,
          before
        )
      )
  }))
)
