// In-memory store of refusals: rows by id, each account's refusals in (createdAt, id) order, and
// each agent's newest refusal (the overview's "last refusal" without a walk).
import { Effect, Layer } from "effect"
import type { Agent } from "../../schema/keys/keys.js"
import { cents } from "../../schema/platform/common.js"
import type { ServiceRecord } from "../../schema/commerce/services.js"
import type { RefusalRecord, RefusalView } from "../../schema/refusals/refusals.js"
import { RefusalsStore } from "../../services/refusals/RefusalsStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

const NO_ACCOUNT = ""

const toView = (r: RefusalRecord): RefusalView => ({
  id: r.id,
  agentId: r.agentId,
  serviceId: r.serviceId,
  serviceName: r.serviceName,
  tierId: r.tierId,
  priceCents: cents(r.priceCents),
  reason: r.reason,
  message: r.message,
  path: r.path,
  createdAt: r.createdAt
})

const older = (a: RefusalView, b: { readonly createdAt: string; readonly id: string }) =>
  a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)

export const MemoryRefusalsStore = Layer.effect(
  RefusalsStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    // The keys and catalogue tables, looked up by name as their own adapters keep them.
    const agents = db.table<string, Agent>("agents")
    const agentsByAccount = db.table<string, Array<string>>("agents_by_account")
    const services = db.table<string, ServiceRecord>("commerce_services")
    const byAccount = db.table<string, Array<RefusalView>>("refusals_by_account")
    const latest = db.table<string, RefusalView>("refusals_latest")
    return RefusalsStore.of({
      insert: Effect.fnUntraced(function* (r: RefusalRecord) {
        const serviceName = r.serviceName ?? (r.serviceId === null ? null : (services.get(r.serviceId)?.name ?? null))
        const view = toView({ ...r, serviceName })
        const accountId = agents.get(r.agentId)?.accountId ?? NO_ACCOUNT
        yield* byAccount.insertSorted(accountId, view, (a, b) => older(a, b))
        const previous = latest.get(r.agentId)
        if (previous === undefined || older(previous, view)) yield* latest.set(r.agentId, view)
      }),
      page: (accountId, options) =>
        Effect.sync(() => {
          const rows = byAccount.get(accountId) ?? []
          const out: Array<RefusalView> = []
          for (let i = rows.length - 1; i >= 0 && out.length < options.limit; i--) {
            const row = rows[i]!
            if (options.before !== undefined && !older(row, options.before)) continue
            if (options.agentId !== undefined && row.agentId !== options.agentId) continue
            out.push(row)
          }
          return out
        }),
      latestByAgent: (accountId) =>
        Effect.sync(() =>
          (agentsByAccount.get(accountId) ?? []).flatMap((agentId) => {
            const row = latest.get(agentId)
            return row === undefined ? [] : [row]
          })
        )
    })
  })
)
