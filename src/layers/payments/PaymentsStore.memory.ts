// In-memory PaymentsStore: checkouts, processed processor events, knowledge access, acquisitions.
import { Effect, Layer } from "effect"
import type { Acquisition, CheckoutRecord, KnowledgeAccess } from "../../schema/payments/payments.js"
import { PaymentsStore } from "../../services/payments/PaymentsStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryPaymentsStore = Layer.effect(
  PaymentsStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const checkouts = db.table<string, CheckoutRecord>("checkouts")
    const bySubscription = db.table<string, string>("checkouts_by_subscription")
    const processorEvents = db.table<string, { id: string; type: string; receivedAt: string; outcome: string | null }>(
      "processor_events"
    )
    const access = db.table<string, KnowledgeAccess>("knowledge_access")
    const accessBySession = db.table<string, string>("knowledge_access_by_session")
    const acquisitions = db.table<string, Acquisition>("acquisitions")
    const acquisitionsByAgent = db.table<string, Array<string>>("acquisitions_by_agent")
    /** Acquisition id → its position in its agent's list, where a cursor resumes (Postgres: seq by primary key). */
    const acquisitionPos = db.table<string, number>("acquisition_pos")
    /** `agentId:projectId` → the paid acquisition (Postgres: the partial (agent_id, project_id) index). */
    const paidAcquisition = db.table<string, string>("acquisitions_paid")
    const indexPaid = (a: Acquisition) =>
      Effect.suspend(() => {
        const key = `${a.agentId}:${a.projectId}`
        if (a.status === "paid") return paidAcquisition.set(key, a.id)
        return paidAcquisition.get(key) === a.id ? paidAcquisition.delete(key) : Effect.void
      })

    const updateCheckout = (c: CheckoutRecord) =>
      Effect.andThen(
        checkouts.set(c.sessionId, c),
        c.subscriptionId ? bySubscription.set(c.subscriptionId, c.sessionId) : Effect.void
      )

    return {
      insertCheckout: (c) =>
        db.atomically(
          Effect.suspend(() => {
            const existing = checkouts.get(c.sessionId)
            const result: { checkout: CheckoutRecord; inserted: boolean } = existing
              ? { checkout: existing, inserted: false }
              : { checkout: c, inserted: true }
            return existing ? Effect.succeed(result) : Effect.as(updateCheckout(c), result)
          })
        ),
      getCheckout: (id) => Effect.sync(() => checkouts.get(id)),
      // The memory engine's write lock serialises units of work: reading is locking.
      lockCheckout: (id) => Effect.sync(() => checkouts.get(id)),
      updateCheckout,
      findCheckoutBySubscription: (subscriptionId) =>
        Effect.sync(() => {
          const id = bySubscription.get(subscriptionId)
          return id ? checkouts.get(id) : undefined
        }),
      recordEvent: (e) =>
        db.atomically(
          Effect.suspend(() =>
            processorEvents.get(e.id)
              ? Effect.succeed(false)
              : Effect.as(processorEvents.set(e.id, { ...e, outcome: null }), true)
          )
        ),
      setEventOutcome: (id, outcome) =>
        Effect.suspend(() => {
          const e = processorEvents.get(id)
          return e ? processorEvents.set(id, { ...e, outcome }) : Effect.void
        }),
      insertAccess: (a) => Effect.andThen(access.set(a.id, a), accessBySession.set(a.checkoutSessionId, a.id)),
      getAccessBySession: (sessionId) =>
        Effect.sync(() => {
          const id = accessBySession.get(sessionId)
          return id ? access.get(id) : undefined
        }),
      insertAcquisition: Effect.fnUntraced(function* (a) {
        yield* acquisitions.set(a.id, a)
        yield* acquisitionPos.set(a.id, acquisitionsByAgent.get(a.agentId)?.length ?? 0)
        yield* acquisitionsByAgent.append(a.agentId, a.id)
        yield* indexPaid(a)
      }),
      updateAcquisition: (a) => Effect.andThen(acquisitions.set(a.id, a), indexPaid(a)),
      getAcquisition: (id) => Effect.sync(() => acquisitions.get(id)),
      // Walks the agent's list from the cursor's acquisition down, stopping at the page.
      listAcquisitions: (agentId, { limit, beforeId }) =>
        Effect.sync(() => {
          const ids = acquisitionsByAgent.get(agentId) ?? []
          let from = ids.length
          if (beforeId !== undefined) {
            const at = acquisitionPos.get(beforeId)
            if (at === undefined || ids[at] !== beforeId) return []
            from = at
          }
          const out: Array<Acquisition> = []
          for (let i = from - 1; i >= 0 && out.length < limit; i--) out.push(acquisitions.get(ids[i])!)
          return out
        }),
      findPaidAcquisition: (agentId, projectId) =>
        Effect.sync(() => {
          const id = paidAcquisition.get(`${agentId}:${projectId}`)
          return id === undefined ? undefined : acquisitions.get(id)
        })
    }
  })
)
