// The negotiation list's query: a keyset page, narrowed to one side and one status (a seller lists
// what waits for its answer with role=seller&status=awaiting_seller).
import { Schema } from "effect"
import { Cursor, PageLimit } from "../platform/common.js"
import { NegotiationStatus, Party } from "./negotiation.js"

export const NegotiationsQuery = Schema.Struct({
  limit: Schema.optional(PageLimit),
  cursor: Schema.optional(Cursor),
  /** Only the negotiations where you are this party (default: both). */
  role: Schema.optional(Party),
  /** Only the negotiations in this state as of now (an offer past its expiry is `expired`). */
  status: Schema.optional(NegotiationStatus)
})
export type NegotiationsQuery = typeof NegotiationsQuery.Type

/** What the store narrows a page to; `now` decides which offers count as expired. */
export interface NegotiationFilter {
  readonly role?: Party | undefined
  readonly status?: NegotiationStatus | undefined
  readonly now: string
}
