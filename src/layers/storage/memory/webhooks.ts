// In-memory webhook store: endpoints, a per-endpoint cursor over the agent's outbox events (the
// memory queue), delivery rows with the same claim/lease/fence rules as Postgres, and the attempt log.
import { Effect, Layer } from "effect"
import { Conflict } from "../../../schema/errors.js"
import type { DomainEvent } from "../../../schema/events.js"
import type { AttemptRecord, ClaimedDelivery, DeliveryRecord, EndpointRecord } from "../../../schema/webhooks.js"
import { WebhookStore } from "../../../services/Webhooks.js"
import { MemoryDb } from "./MemoryDb.js"

export const MemoryWebhookStore = Layer.effect(
  WebhookStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    // The outbox written by MemoryEventStore (same MemoryDb, same table names).
    const events = db.table<string, DomainEvent>("events")
    const eventsByAgent = db.table<string, Array<string>>("events_by_agent")

    const endpoints = db.table<string, EndpointRecord>("webhook_endpoints") // by agent id
    /** How many of the agent's outbox events have been fanned out to its endpoint. */
    const cursors = db.table<string, number>("webhook_cursors")
    const deliveries = db.table<string, DeliveryRecord>("webhook_deliveries")
    /** Non-terminal deliveries (pending or delivering): the only rows a claim looks at. */
    const open = db.table<string, true>("webhook_open_deliveries")
    const deliveryKeys = db.table<string, string>("webhook_delivery_keys") // endpointId:eventId → delivery id
    const deliveriesByAgent = db.table<string, Array<string>>("webhook_deliveries_by_agent")
    const attemptsByAgent = db.table<string, Array<AttemptRecord>>("webhook_attempts_by_agent")

    const outboxLength = (agentId: string) => eventsByAgent.get(agentId)?.length ?? 0

    return {
      getEndpoint: (agentId) => Effect.sync(() => endpoints.get(agentId)),
      // The memory engine's write lock already serialises every unit of work.
      getEndpointForUpdate: (agentId) => Effect.sync(() => endpoints.get(agentId)),
      insertEndpoint: (r) =>
        Effect.suspend(() =>
          endpoints.get(r.agentId)
            ? Effect.fail(new Conflict({ message: "the webhook was created by a concurrent request; retry" }))
            : // Events already in the outbox predate the endpoint: start after them.
              Effect.andThen(endpoints.set(r.agentId, r), cursors.set(r.agentId, outboxLength(r.agentId)))
        ),
      updateEndpoint: (r) => endpoints.set(r.agentId, r),
      deleteEndpoint: (agentId) =>
        Effect.gen(function* () {
          const e = endpoints.get(agentId)
          if (!e) return false
          for (const id of deliveriesByAgent.get(agentId) ?? []) {
            const d = deliveries.get(id)
            if (!d) continue
            yield* deliveries.delete(id)
            yield* open.delete(id)
            yield* deliveryKeys.delete(`${d.endpointId}:${d.eventId}`)
          }
          yield* deliveriesByAgent.delete(agentId)
          yield* attemptsByAgent.delete(agentId)
          yield* cursors.delete(agentId)
          yield* endpoints.delete(agentId)
          return true
        }),
      takeNewEvents: (_now, limit) =>
        Effect.gen(function* () {
          const out: Array<{ event: DomainEvent; endpoint: EndpointRecord }> = []
          for (const endpoint of endpoints.values()) {
            if (out.length >= limit) break
            const list = eventsByAgent.get(endpoint.agentId) ?? []
            const from = cursors.get(endpoint.agentId) ?? list.length
            if (from >= list.length) continue
            const to = Math.min(list.length, from + (limit - out.length))
            for (let i = from; i < to; i++) out.push({ event: events.get(list[i])!, endpoint })
            yield* cursors.set(endpoint.agentId, to)
          }
          return out
        }),
      insertDelivery: (r) =>
        Effect.gen(function* () {
          const key = `${r.endpointId}:${r.eventId}`
          if (deliveryKeys.get(key)) return
          yield* deliveryKeys.set(key, r.id)
          yield* deliveries.set(r.id, r)
          yield* open.set(r.id, true)
          yield* deliveriesByAgent.append(r.agentId, r.id)
        }),
      claimDue: (now, leaseUntil, limit) =>
        Effect.gen(function* () {
          const due: Array<DeliveryRecord> = []
          for (const id of open.rows.keys()) {
            const d = deliveries.get(id)
            if (d && (d.status === "pending" || d.status === "delivering") && d.dueAt !== null && d.dueAt <= now) due.push(d)
          }
          due.sort((a, b) => (a.dueAt! < b.dueAt! ? -1 : a.dueAt! > b.dueAt! ? 1 : 0))
          const claimed: Array<ClaimedDelivery> = []
          for (const d of due.slice(0, limit)) {
            const next: DeliveryRecord = { ...d, status: "delivering", attempts: d.attempts + 1, dueAt: leaseUntil, updatedAt: now }
            yield* deliveries.set(d.id, next)
            claimed.push({ ...next, leaseExpired: d.status === "delivering" })
          }
          return claimed
        }),
      finishDelivery: (r, claimedAttempt) =>
        Effect.gen(function* () {
          const current = deliveries.get(r.id)
          if (!current || current.status !== "delivering" || current.attempts !== claimedAttempt) return false
          const { leaseExpired: _, ...row } = r as ClaimedDelivery
          yield* deliveries.set(r.id, row)
          if (r.status !== "pending" && r.status !== "delivering") yield* open.delete(r.id)
          return true
        }),
      insertAttempt: (r) => attemptsByAgent.append(r.agentId, r),
      listAttempts: (agentId, limit, eventId) =>
        Effect.sync(() => {
          const all = attemptsByAgent.get(agentId) ?? []
          const out: Array<AttemptRecord> = []
          for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
            if (eventId === undefined || all[i].eventId === eventId) out.push(all[i])
          }
          return out
        }),
      listDeliveries: (agentId) =>
        Effect.sync(() => (deliveriesByAgent.get(agentId) ?? []).map((id) => deliveries.get(id)).filter((d): d is DeliveryRecord => d !== undefined))
    }
  })
)
