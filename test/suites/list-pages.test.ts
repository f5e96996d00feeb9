// Keyset pages of approvals on every storage give exactly what their filter defines, newest first
// by (createdAt, id), across pages — with rows sharing a createdAt, inserted out of order, and after
// statuses change (the memory store's per-status ordered index must follow every update).
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { ApprovalRecord, ApprovalStatus } from "../../src/schema/commerce.js"
import { CommerceStore } from "../../src/services/Settlement.js"
import { forEachStorage } from "../fixtures/suite.js"

const STATUSES: ReadonlyArray<ApprovalStatus> = ["pending", "approved", "declined", "expired"]

const approval = (i: number): ApprovalRecord => ({
  id: `aprq${String(i).padStart(3, "0")}`,
  // Two accounts; every third row shares its createdAt with a neighbour (ties are broken by id).
  accountId: i % 5 === 0 ? "acct_pages_other" : "acct_pages",
  agentId: `agt_pages${i % 3}`,
  serviceId: "svc_pages",
  tierId: "unit",
  quotedPriceCents: 100 + i,
  negotiationId: null,
  input: { i },
  reason: "manual",
  status: "pending",
  idempotencyKey: null,
  reservedTransactionId: `tx_pages_${i}`,
  transactionId: null,
  decidedBy: null,
  createdAt: new Date(Date.UTC(2026, 10, 1) + Math.floor(i / 3) * 60_000).toISOString(),
  decidedAt: null,
  expiresAt: "2026-12-31T00:00:00.000Z"
})

const newest = (a: ApprovalRecord, b: ApprovalRecord) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1)

forEachStorage(
  "list pages",
  (storage) => Layer.mergeAll(storage),
  (it) => {
    it.effect("approvals, all and per status, paged 4 at a time, equal their definition; after status changes too", () =>
      Effect.gen(function* () {
        const store = yield* CommerceStore
        const rows = new Map<string, ApprovalRecord>()
        // Inserted out of (createdAt, id) order, so the ordered indexes are exercised.
        for (const i of [...Array(45).keys()].map((k) => (k * 17) % 45)) {
          const a = approval(i)
          rows.set(a.id, a)
          yield* store.insertApproval(a)
        }
        const pagesOf = (accountId: string, status: ApprovalStatus | undefined) =>
          Effect.gen(function* () {
            const out: Array<string> = []
            let before: { createdAt: string; id: string } | undefined
            for (let n = 0; n < 100; n++) {
              const page = yield* store.listApprovals(accountId, status, 4, before)
              expect(page.length).toBeLessThanOrEqual(4)
              out.push(...page.map((a) => a.id))
              if (page.length < 4) return out
              const last = page[page.length - 1]
              before = { createdAt: last.createdAt, id: last.id }
            }
            return out
          })
        const reference = (accountId: string, status: ApprovalStatus | undefined) =>
          [...rows.values()]
            .filter((a) => a.accountId === accountId && (status === undefined || a.status === status))
            .sort(newest)
            .map((a) => a.id)
        const check = Effect.gen(function* () {
          for (const accountId of ["acct_pages", "acct_pages_other"]) {
            for (const status of [undefined, ...STATUSES]) {
              expect(yield* pagesOf(accountId, status), `${accountId} ${status ?? "all"}`).toEqual(reference(accountId, status))
            }
          }
        })
        yield* check
        // Decide some (pending → approved / declined / expired), one of them twice over.
        for (const [i, status] of [[3, "approved"], [4, "declined"], [7, "approved"], [9, "expired"], [13, "declined"], [21, "approved"], [40, "approved"]] as const) {
          const next = { ...rows.get(approval(i).id)!, status, decidedAt: "2026-11-20T00:00:00.000Z" }
          rows.set(next.id, next)
          yield* store.updateApproval(next)
        }
        const twice = { ...rows.get(approval(9).id)!, status: "declined" as const }
        rows.set(twice.id, twice)
        yield* store.updateApproval(twice)
        yield* check
        expect(reference("acct_pages", "approved").length).toBe(3)
      })
    )
  }
)
