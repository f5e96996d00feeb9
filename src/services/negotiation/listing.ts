// The negotiation list: an agent's negotiations, newest first, in keyset pages, narrowed to one side
// and one state (a live seller's inbox is role=seller, status=awaiting_seller).
import { Clock, Effect } from "effect"
import type { NegotiationsQuery } from "../../schema/negotiation/query.js"
import { decodeTimeCursor, encodeCursor } from "../../schema/platform/common.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import { NegotiationStore } from "./NegotiationStore.js"
import { iso, toNegotiation } from "./policy.js"

export const makeListing = Effect.map(NegotiationStore, (store) =>
  Effect.fnUntraced(function* (agentId: string, options: NegotiationsQuery) {
    const limit = options.limit ?? 20
    // A validated time: a forged one would otherwise reach the SQL cast.
    const before = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor)
    if (options.cursor !== undefined && before === undefined) {
      return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
    }
    const now = yield* Clock.currentTimeMillis
    const filter = { role: options.role, status: options.status, now: iso(now) }
    const rows = yield* store.listForAgent(agentId, { limit: limit + 1, before, filter })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map((r) => toNegotiation(r, now)),
      nextCursor: rows.length > limit && last ? encodeCursor({ c: last.createdAt, i: last.id }) : null
    }
  })
)
