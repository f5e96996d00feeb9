// Keyset pages of approvals and transactions on every storage give exactly what their filter
// defines, newest first by (createdAt, id), across pages — with rows sharing a createdAt, inserted
// out of order, purchases from oneself, and after statuses change (the memory store's per-status
// and per-side ordered lists must follow every update).
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { ApprovalRecord, ApprovalStatus } from "../../src/schema/commerce/approvals.js"
import type { TransactionFilter } from "../../src/schema/commerce/filters.js"
import type { TransactionRecord } from "../../src/schema/commerce/transactions.js"
import type { ProposalRecord } from "../../src/schema/invest/invest.js"
import { Agent } from "../../src/schema/keys/keys.js"
import { InvestStore } from "../../src/services/invest/InvestStore.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
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

const newest = (a: ApprovalRecord, b: ApprovalRecord) =>
  a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1

forEachStorage(
  "list pages",
  (storage) => Layer.mergeAll(storage),
  (it) => {
    it.effect(
      "approvals, all and per status, paged 4 at a time, equal their definition; after status changes too",
      () =>
        Effect.gen(function* () {
          const store = yield* PurchaseStore
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
                expect(yield* pagesOf(accountId, status), `${accountId} ${status ?? "all"}`).toEqual(
                  reference(accountId, status)
                )
              }
            }
          })
          yield* check
          // Decide some (pending → approved / declined / expired), one of them twice over.
          for (const [i, status] of [
            [3, "approved"],
            [4, "declined"],
            [7, "approved"],
            [9, "expired"],
            [13, "declined"],
            [21, "approved"],
            [40, "approved"]
          ] as const) {
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

    it.effect(
      "transactions by role, status, service and time window, paged 3 at a time, equal their definition; after refunds too",
      () =>
        Effect.gen(function* () {
          const store = yield* PurchaseStore
          const A = "agt_txpages"
          const rows = new Map<string, TransactionRecord>()
          const tx = (i: number): TransactionRecord =>
            ({
              id: `txq${String(i).padStart(3, "0")}`,
              // A buys, sells, and (every 9th) buys from itself; other agents trade among themselves too.
              buyerAgentId: i % 9 === 0 ? A : i % 3 === 0 ? "agt_txother" : i % 3 === 1 ? A : "agt_txbuyer",
              sellerAgentId: i % 9 === 0 ? A : i % 3 === 2 ? A : "agt_txseller",
              serviceId: `svc_tx${i % 4}`,
              serviceName: "S",
              category: "c",
              pricingModel: "per_call",
              tierId: "unit",
              listPriceCents: 10,
              priceCents: 10,
              sellerCents: 9,
              feeCents: 1,
              negotiationId: null,
              approvalId: null,
              idempotencyKey: null,
              status: i % 7 === 0 ? "failed" : "completed",
              ledgerEntryId: null,
              // Every pair shares its createdAt (ties are broken by id).
              createdAt: new Date(Date.UTC(2026, 10, 1) + Math.floor(i / 2) * 60_000).toISOString(),
              refundedAt: null
            }) as TransactionRecord
          for (const i of [...Array(70).keys()].map((k) => (k * 23) % 70)) {
            const r = tx(i)
            rows.set(r.id, r)
            yield* store.insertTransaction(r, {
              transactionId: r.id,
              serviceId: r.serviceId,
              tierId: r.tierId,
              success: r.status === "completed",
              latencyMs: 1,
              output: null,
              error: null,
              deliveredAt: r.createdAt
            })
          }
          type Query = Omit<TransactionFilter, "agentId" | "limit" | "before">
          const pagesOf = (q: Query) =>
            Effect.gen(function* () {
              const out: Array<string> = []
              let before: { createdAt: string; id: string } | undefined
              for (let n = 0; n < 100; n++) {
                const page = yield* store.listTransactions({ ...q, agentId: A, limit: 3, before })
                out.push(...page.map((r) => r.tx.id))
                if (page.length < 3) return out
                const last = page[page.length - 1].tx
                before = { createdAt: last.createdAt, id: last.id }
              }
              return out
            })
          const reference = (q: Query) =>
            [...rows.values()]
              .filter((r) =>
                q.role === "buyer"
                  ? r.buyerAgentId === A
                  : q.role === "seller"
                    ? r.sellerAgentId === A
                    : r.buyerAgentId === A || r.sellerAgentId === A
              )
              .filter(
                (r) =>
                  (q.status === undefined || r.status === q.status) &&
                  (q.serviceId === undefined || r.serviceId === q.serviceId)
              )
              .filter(
                (r) => (q.from === undefined || r.createdAt >= q.from) && (q.to === undefined || r.createdAt < q.to)
              )
              .sort((a, b) =>
                a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1
              )
              .map((r) => r.id)
          const window = {
            from: new Date(Date.UTC(2026, 10, 1) + 5 * 60_000).toISOString(),
            to: new Date(Date.UTC(2026, 10, 1) + 25 * 60_000).toISOString()
          }
          const check = Effect.gen(function* () {
            for (const role of [undefined, "buyer", "seller"] as const) {
              for (const status of [undefined, "completed", "failed", "refunded"] as const) {
                for (const extra of [{}, { serviceId: "svc_tx1" }, window]) {
                  const q: Query = { role, status, ...extra }
                  expect(yield* pagesOf(q), JSON.stringify(q)).toEqual(reference(q))
                }
              }
            }
          })
          yield* check
          // Refund some (one bought from itself): they leave the completed lists for the refunded ones.
          for (const i of [1, 2, 9, 18, 40, 52, 64]) {
            const r = { ...rows.get(tx(i).id)!, status: "refunded" as const, refundedAt: "2026-11-20T00:00:00.000Z" }
            rows.set(r.id, r)
            yield* store.updateTransaction(r)
          }
          yield* check
          expect(reference({ status: "refunded" }).length).toBeGreaterThan(3)
        })
    )

    it.effect(
      "holdings per agent, a target's top holders and the newest proposals equal their definition as investments and proposals arrive",
      () =>
        Effect.gen(function* () {
          const store = yield* InvestStore
          const target = "tgt_pages"
          const held = new Map<string, { agentId: string; target: string; tokens: number; first: string }>()
          for (const t of [target, "tgt_other0", "tgt_other1"]) {
            yield* store.lockOffering({
              target: t,
              totalSupply: 1_000_000,
              offeredTokens: 490_000,
              soldTokens: 0,
              priceCents: 1,
              createdAt: "2026-11-01T00:00:00.000Z"
            })
          }
          // 12 agents invest in rounds, out of order, with ties on tokens (the earliest investor, then the id, goes first).
          for (let round = 0; round < 4; round++) {
            for (const k of [...Array(12).keys()].map((x) => (x * 5) % 12)) {
              if ((k + round) % 3 === 0) continue
              const agentId = `agt_inv${String(k).padStart(2, "0")}`
              const at = new Date(Date.UTC(2026, 10, 1, round, k % 2)).toISOString()
              const tokens = 10 * ((k % 4) + 1)
              for (const t of [target, `tgt_other${k % 2}`]) {
                yield* store.addToHolding(agentId, t, tokens, tokens * 3, at)
                const key = `${agentId}|${t}`
                const h = held.get(key)
                held.set(key, { agentId, target: t, tokens: (h?.tokens ?? 0) + tokens, first: h?.first ?? at })
              }
            }
            const ranked = [...held.values()]
              .filter((h) => h.target === target)
              .sort(
                (a, b) =>
                  b.tokens - a.tokens || Date.parse(a.first) - Date.parse(b.first) || (a.agentId < b.agentId ? -1 : 1)
              )
            expect(
              (yield* store.topHolders(target, 5)).map((h) => [h.agentId, h.tokens]),
              `round ${round}`
            ).toEqual(ranked.slice(0, 5).map((h) => [h.agentId, h.tokens]))
          }
          const agents = ["agt_inv07", "agt_inv01", "agt_inv_none", "agt_inv01"]
          const expected = [...held.values()]
            .filter((h) => agents.includes(h.agentId))
            .sort((a, b) => (a.agentId !== b.agentId ? (a.agentId < b.agentId ? -1 : 1) : a.target < b.target ? -1 : 1))
          expect((yield* store.holdingsFor(agents)).map((h) => [h.agentId, h.target, h.tokens])).toEqual(
            expected.map((h) => [h.agentId, h.target, h.tokens])
          )
          // Proposals inserted out of order, two sharing a createdAt: newest first, ties by id descending.
          const proposal = (i: number, minute: number): ProposalRecord => ({
            id: `prp_pages${i}`,
            title: "t",
            description: "d",
            createdByAgentId: "agt_inv01",
            status: "open",
            createdAt: new Date(Date.UTC(2030, 0, 1, 0, minute)).toISOString(),
            votingEndsAt: "2030-02-01T00:00:00.000Z",
            closedAt: null,
            vetoWindowEndsAt: null,
            executedAt: null,
            vetoedAt: null,
            vetoReason: null,
            vetoedBy: null,
            snapshot: [],
            totalWeight: 0,
            quorumWeight: 0,
            yesWeight: 0,
            noWeight: 0,
            abstainWeight: 0,
            votesCast: 0
          })
          for (const [i, minute] of [
            [1, 5],
            [2, 1],
            [3, 5],
            [4, 3]
          ] as const)
            yield* store.insertProposal(proposal(i, minute))
          expect((yield* store.listProposals(3)).map((p) => p.id)).toEqual(["prp_pages3", "prp_pages1", "prp_pages4"])
        })
    )

    it.effect("an account's agents and keys, by (createdAt, id), only its own, inserted out of order with ties", () =>
      Effect.gen(function* () {
        const store = yield* KeysStore
        for (const id of ["acct_lp1", "acct_lp2"]) {
          yield* store.insertAccount({
            id,
            email: `${id}@example.com`,
            name: id,
            passwordHash: "x",
            planId: null,
            createdAt: "2026-11-01T00:00:00.000Z"
          })
        }
        const at = (m: number) => new Date(Date.UTC(2026, 10, 2, 0, m)).toISOString()
        const agents = [
          [7, 3],
          [2, 1],
          [9, 3],
          [4, 2],
          [5, 1],
          [1, 0]
        ].map(([n, m]) =>
          Agent.make({
            id: `agt_lp${n}`,
            accountId: n % 2 === 0 ? "acct_lp2" : "acct_lp1",
            name: `a${n}`,
            organization: null,
            createdAt: at(m)
          })
        )
        for (const a of agents) yield* store.insertAgent(a)
        for (const a of agents) {
          yield* store.insertKey({
            id: `key_${a.id}`,
            accountId: a.accountId,
            agentId: a.id,
            name: "k",
            prefix: "ak",
            secretHash: `h_${a.id}`,
            permissions: [],
            createdAt: a.createdAt,
            expiresAt: null,
            revokedAt: null,
            lastUsedAt: null
          })
        }
        for (const account of ["acct_lp1", "acct_lp2"]) {
          const expected = agents
            .filter((a) => a.accountId === account)
            .sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? -1 : 1) : a.id < b.id ? -1 : 1))
            .map((a) => a.id)
          expect(
            (yield* store.listAgents(account)).map((a) => a.id),
            account
          ).toEqual(expected)
          expect(
            (yield* store.listKeys(account)).map((k) => k.agentId),
            account
          ).toEqual(expected)
        }
        expect(yield* store.listAgents("acct_lp_none")).toEqual([])
      })
    )
  }
)
