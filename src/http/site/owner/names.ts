// Approvals and refusals with the names an owner reads: the agent that asked, the service and its
// tier, the seller. The agents in one read, each distinct service of the list once.
import { Effect, Option } from "effect"
import { type Approval } from "../../../schema/commerce/approvals.js"
import { reasonText } from "../../../schema/audit/inbox.js"
import type { Caller } from "../../../services/keys/Caller.js"
import { Catalog } from "../../../services/commerce/Catalog.js"
import { Commerce } from "../../../services/commerce/Commerce.js"
import { Keys } from "../../../services/keys/Keys.js"

export interface NamedApproval extends Approval {
  readonly agentName: string
  readonly serviceName: string
  readonly tierName: string
  readonly sellerName: string | null
  readonly reasonText: string
}

const withNames = Effect.fnUntraced(function* (approvals: ReadonlyArray<Approval>) {
  const catalog = yield* Catalog
  const keys = yield* Keys
  const services = new Map(
    yield* Effect.forEach(
      [...new Set(approvals.map((a) => a.serviceId))],
      (id) => Effect.map(Effect.option(catalog.getRecord(id)), (s) => [id, Option.getOrUndefined(s)] as const),
      { concurrency: 4 }
    )
  )
  const sellers = [...services.values()].flatMap((s) => (s ? [s.sellerAgentId] : []))
  const agents = yield* keys.agentsById([...approvals.map((a) => a.agentId), ...sellers])
  return approvals.map((a): NamedApproval => {
    const service = services.get(a.serviceId)
    return {
      ...a,
      agentName: agents.get(a.agentId)?.name ?? a.agentId,
      serviceName: service?.name ?? a.serviceId,
      tierName: service?.tiers.find((t) => t.id === a.tierId)?.name ?? a.tierId,
      sellerName: service ? (agents.get(service.sellerAgentId)?.name ?? null) : null,
      reasonText: reasonText(a.reason)
    }
  })
})

/** The account's pending approvals (one agent's when given), newest first, with names. */
export const pendingNamed = (caller: Caller, agentId?: string) =>
  Effect.flatMap(
    Effect.flatMap(Commerce, (c) => c.listApprovals(caller, "pending")),
    (r) => withNames(agentId === undefined ? r.data : r.data.filter((a) => a.agentId === agentId))
  )
