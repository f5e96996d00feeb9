// In-memory webhook store: endpoints, a per-endpoint cursor over the agent's outbox events (the
// memory queue), delivery rows with the same fair claim/lease/fence rules as Postgres (per-endpoint
// open lists in outbox order, a per-endpoint in-flight list, round-robin by last claim), the attempt log.
import { Effect, Layer } from "effect"
import { Conflict } from "../../schema/platform/errors.js"
import type { DomainEvent } from "../../schema/events/events.js"
import type {
  AttemptRecord,
  BacklogSummary,
  ClaimedDelivery,
  DeliveryRecord,
  EndpointRecord
} from "../../schema/webhooks/records.js"
import { WebhookStore } from "../../services/webhooks/WebhookStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

/** How many of the ascending `positions` are below `pos` (binary search). */
const below = (positions: ReadonlyArray<number>, pos: number) => {
  let lo = 0
  let hi = positions.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (positions[mid] < pos) lo = mid + 1
    else hi = mid
  }
  return lo
}

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
    const deliveryKeys = db.table<string, string>("webhook_delivery_keys") // endpointId:eventId → delivery id
    const deliveriesByAgent = db.table<string, Array<string>>("webhook_deliveries_by_agent")
    const attemptsByAgent = db.table<string, Array<AttemptRecord>>("webhook_attempts_by_agent")
    /** Per agent and event (`agentId:eventId`): its attempts' positions in the agent's list (Postgres: (agent_id, event_id, seq)). */
    const attemptsByEvent = db.table<string, Array<number>>("webhook_attempts_by_event")
    /** Attempt id → its position in its agent's list, where a cursor resumes (Postgres: seq by primary key). */
    const attemptPos = db.table<string, number>("webhook_attempt_pos")
    /** Delivery id → its position in its agent's list (Postgres: seq by primary key). */
    const deliveryPos = db.table<string, number>("webhook_delivery_pos")
    /** Per endpoint: its open deliveries in outbox order (Postgres: the (endpoint_id, seq) partial index). */
    const openByEndpoint = db.table<string, Array<string>>("webhook_open_by_endpoint")
    /** Per endpoint: its rows in `delivering` (leased; expired leases stay until reclaimed or finished). */
    const leasedByEndpoint = db.table<string, Array<string>>("webhook_leased_by_endpoint")
    /** Per endpoint: when a claim last took from it (Postgres: webhook_endpoints.last_claimed_at). */
    const lastClaimed = db.table<string, string>("webhook_last_claimed")

    const isOpen = (d: DeliveryRecord) => d.status === "pending" || d.status === "delivering"

    /** The rows of the endpoint a claim may take now (the port's rule: a probe while failing, else due rows under the cap). */
    const claimableOf = (e: EndpointRecord, now: string, perEndpoint: number): Array<DeliveryRecord> => {
      const leased = leasedByEndpoint.get(e.id) ?? []
      let inFlight = 0
      for (const id of leased) {
        const d = deliveries.get(id)
        if (d && d.status === "delivering" && d.dueAt !== null && d.dueAt > now) inFlight++
      }
      const queue = openByEndpoint.get(e.id) ?? []
      const out: Array<DeliveryRecord> = []
      if (e.retryAt !== null) {
        // Failing: one probe, the oldest open row, once its time has come and nothing is in flight.
        if (e.retryAt > now || inFlight > 0) return out
        for (const id of queue) {
          const d = deliveries.get(id)
          if (d && isOpen(d)) return [d]
        }
        return out
      }
      const n = perEndpoint - inFlight
      for (let i = 0; i < queue.length && out.length < n; i++) {
        const d = deliveries.get(queue[i])
        if (d && isOpen(d) && d.dueAt !== null && d.dueAt <= now) out.push(d)
      }
      return out
    }

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
      deleteEndpoint: Effect.fnUntraced(function* (agentId) {
        const e = endpoints.get(agentId)
        if (!e) return false
        for (const id of deliveriesByAgent.get(agentId) ?? []) {
          yield* deliveryPos.delete(id)
          const d = deliveries.get(id)
          if (!d) continue
          yield* deliveries.delete(id)
          yield* deliveryKeys.delete(`${d.endpointId}:${d.eventId}`)
        }
        for (const a of attemptsByAgent.get(agentId) ?? []) {
          yield* attemptPos.delete(a.id)
          yield* attemptsByEvent.delete(`${agentId}:${a.eventId}`)
        }
        yield* openByEndpoint.delete(e.id)
        yield* leasedByEndpoint.delete(e.id)
        yield* lastClaimed.delete(e.id)
        yield* deliveriesByAgent.delete(agentId)
        yield* attemptsByAgent.delete(agentId)
        yield* cursors.delete(agentId)
        yield* endpoints.delete(agentId)
        return true
      }),
      takeNewEvents: Effect.fnUntraced(function* (_now, limit) {
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
      insertDelivery: Effect.fnUntraced(function* (r) {
        const key = `${r.endpointId}:${r.eventId}`
        if (deliveryKeys.get(key)) return
        yield* deliveryKeys.set(key, r.id)
        yield* deliveries.set(r.id, r)
        yield* openByEndpoint.append(r.endpointId, r.id)
        yield* deliveryPos.set(r.id, deliveriesByAgent.get(r.agentId)?.length ?? 0)
        yield* deliveriesByAgent.append(r.agentId, r.id)
      }),
      claimDue: Effect.fnUntraced(function* (now, leaseUntil, limit, perEndpoint) {
        // Endpoints with work, least recently served first (ties by id), as the Postgres claim orders them.
        const candidates: Array<{
          readonly e: EndpointRecord
          readonly rows: Array<DeliveryRecord>
          readonly last: string
        }> = []
        for (const e of endpoints.values()) {
          if (!e.enabled || e.disabledAt !== null) continue
          const rows = claimableOf(e, now, perEndpoint)
          if (rows.length > 0) candidates.push({ e, rows, last: lastClaimed.get(e.id) ?? "" })
        }
        candidates.sort((a, b) =>
          a.last < b.last ? -1 : a.last > b.last ? 1 : a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0
        )
        const claimed: Array<ClaimedDelivery> = []
        for (const { e, rows } of candidates) {
          if (claimed.length >= limit) break
          for (const d of rows.slice(0, limit - claimed.length)) {
            const next: DeliveryRecord = {
              ...d,
              status: "delivering",
              attempts: d.attempts + 1,
              dueAt: leaseUntil,
              updatedAt: now
            }
            yield* deliveries.set(d.id, next)
            if (d.status !== "delivering") yield* leasedByEndpoint.append(e.id, d.id)
            claimed.push({ ...next, leaseExpired: d.status === "delivering" })
          }
          yield* lastClaimed.set(e.id, now)
        }
        return claimed
      }),
      backlog: (endpointId) =>
        Effect.sync((): BacklogSummary => {
          const ids = openByEndpoint.get(endpointId) ?? []
          let nextDueAt: string | null = null
          for (const id of ids) {
            const due = deliveries.get(id)?.dueAt ?? null
            if (due !== null && (nextDueAt === null || due < nextDueAt)) nextDueAt = due
          }
          return {
            pending: ids.length,
            oldestCreatedAt: ids.length > 0 ? (deliveries.get(ids[0])?.createdAt ?? null) : null,
            nextDueAt
          }
        }),
      finishDelivery: Effect.fnUntraced(function* (r, claimedAttempt) {
        const current = deliveries.get(r.id)
        if (!current || current.status !== "delivering" || current.attempts !== claimedAttempt) return false
        const { leaseExpired: _, ...row } = r as ClaimedDelivery
        yield* deliveries.set(r.id, row)
        yield* leasedByEndpoint.removeItem(r.endpointId, r.id)
        if (r.status !== "pending" && r.status !== "delivering") {
          yield* openByEndpoint.removeItem(r.endpointId, r.id)
        }
        return true
      }),
      insertAttempt: Effect.fnUntraced(function* (r) {
        const pos = attemptsByAgent.get(r.agentId)?.length ?? 0
        yield* attemptPos.set(r.id, pos)
        yield* attemptsByEvent.append(`${r.agentId}:${r.eventId}`, pos)
        yield* attemptsByAgent.append(r.agentId, r)
      }),
      // Walks the agent's list (or one event's positions) from the cursor's attempt down, stopping at the page.
      listAttempts: (agentId, { limit, eventId, beforeId }) =>
        Effect.sync(() => {
          const all = attemptsByAgent.get(agentId) ?? []
          let from = all.length
          if (beforeId !== undefined) {
            const at = attemptPos.get(beforeId)
            if (at === undefined || all[at]?.id !== beforeId) return []
            from = at
          }
          const out: Array<AttemptRecord> = []
          if (eventId === undefined) {
            for (let i = from - 1; i >= 0 && out.length < limit; i--) out.push(all[i])
            return out
          }
          const positions = attemptsByEvent.get(`${agentId}:${eventId}`) ?? []
          for (let k = below(positions, from) - 1; k >= 0 && out.length < limit; k--) out.push(all[positions[k]])
          return out
        }),
      listDeliveries: (agentId, { limit, afterId }) =>
        Effect.sync(() => {
          const ids = deliveriesByAgent.get(agentId) ?? []
          let from = 0
          if (afterId !== undefined) {
            const at = deliveryPos.get(afterId)
            if (at === undefined || ids[at] !== afterId) return []
            from = at + 1
          }
          const out: Array<DeliveryRecord> = []
          for (let i = from; i < ids.length && out.length < limit; i++) {
            const d = deliveries.get(ids[i])
            if (d) out.push(d)
          }
          return out
        })
    }
  })
)
