// The approvals inbox's names: each approval with the agent that asked, the service and tier, the
// seller, and why it waits, in the owner's words. The agents in one read and each distinct service
// of the page once, so a page costs a bounded number of reads whatever its length.
import { Effect, Option } from "effect"
import type { Approval } from "../../schema/commerce/approvals.js"
import { type InboxApproval, reasonText } from "../../schema/audit/inbox.js"
import type { KeysStoreService } from "../keys/KeysStore.js"
import type { CatalogService } from "./Catalog.js"

export const makeApprovalNames = (
  catalog: Pick<CatalogService, "getRecord">,
  keys: Pick<KeysStoreService, "getAgents">
) =>
  Effect.fnUntraced(function* (approvals: ReadonlyArray<Approval>) {
    const services = new Map(
      yield* Effect.forEach(
        [...new Set(approvals.map((a) => a.serviceId))],
        (id) => Effect.map(Effect.option(catalog.getRecord(id)), (s) => [id, Option.getOrUndefined(s)] as const),
        { concurrency: 4 }
      )
    )
    const sellers = [...services.values()].flatMap((s) => (s ? [s.sellerAgentId] : []))
    const ids = [...new Set([...approvals.map((a) => a.agentId), ...sellers])]
    const agents = new Map((yield* keys.getAgents(ids)).map((a) => [a.id, a] as const))
    return approvals.map((a): InboxApproval => {
      const service = services.get(a.serviceId)
      const sellerAgentId = service?.sellerAgentId ?? null
      return {
        ...a,
        agentName: agents.get(a.agentId)?.name ?? null,
        serviceName: service?.name ?? null,
        tierName: service?.tiers.find((t) => t.id === a.tierId)?.name ?? null,
        sellerAgentId,
        sellerName: sellerAgentId === null ? null : (agents.get(sellerAgentId)?.name ?? null),
        reasonText: reasonText(a.reason)
      }
    })
  })
