// Approvals with the names an owner reads, from the same service method as the inbox's JSON route
// (Commerce.approvalsInbox); where a name is gone (an agent or service deleted) the page shows the id.
import { Effect } from "effect"
import { type Approval } from "../../../schema/commerce/approvals.js"
import type { Caller } from "../../../services/keys/Caller.js"
import { Commerce } from "../../../services/commerce/Commerce.js"

export interface NamedApproval extends Approval {
  readonly agentName: string
  readonly serviceName: string
  readonly tierName: string
  readonly sellerName: string | null
  readonly reasonText: string
}

/** The account's pending approvals (one agent's when given), newest first, with names. */
export const pendingNamed = (caller: Caller, agentId?: string) =>
  Effect.map(
    Effect.flatMap(Commerce, (c) => c.approvalsInbox(caller, "pending")),
    (r) =>
      r.data
        .filter((a) => agentId === undefined || a.agentId === agentId)
        .map((a): NamedApproval => ({
          ...a,
          agentName: a.agentName ?? a.agentId,
          serviceName: a.serviceName ?? a.serviceId,
          tierName: a.tierName ?? a.tierId,
          sellerName: a.sellerName
        }))
  )
