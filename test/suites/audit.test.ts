// What the account owner is promised by the audit trail, on every storage: every decision about an
// agent's money that took effect (an approval decided, a policy changed) appears exactly once, with
// who made it, when, and the fields as they were and as they became; a change that was refused or
// rolled back leaves no entry; the trail reads newest first, in pages that miss and repeat nothing.
import { expect } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import type { AuditEntry } from "../../src/schema/audit/audit.js"
import { UpdateWalletBody } from "../../src/schema/commerce/wallets.js"
import { Audit } from "../../src/services/audit/Audit.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { commerceStack, fundedBuyer, ownerCaller, sellerWith, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const ACCOUNT = "acct_audit"
const owner = ownerCaller(ACCOUNT)

/** Every entry of the agent's trail, newest first, read page by page. */
const trail = (agentId: string, limit = 100) =>
  Effect.gen(function* () {
    const audit = yield* Audit
    const all: Array<AuditEntry> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* audit.list(agentId, { cursor, limit })
      all.push(...page.entries)
      if (page.nextCursor === null) return all
      cursor = page.nextCursor
    }
  })

/** A policy change through the wallet service, amounts as plain numbers (decoded as the route would). */
const setPolicy = (agentId: string, fields: Record<string, unknown>, by: "owner" | "key") =>
  Effect.flatMap(Wallet, (w) =>
    w.updatePolicy(
      agentId,
      Schema.decodeUnknownSync(UpdateWalletBody)(fields),
      by === "owner" ? { byOwner: true, actorId: ACCOUNT } : { byOwner: false, actorId: `key_${agentId}` }
    )
  )

forEachStorage(
  "audit trail",
  (storage) => Layer.mergeAll(Audit.layer).pipe(Layer.provideMerge(commerceStack(storage))),
  (it) => {
    it.effect("each owner decision on an approval is one entry: who, when, the approval before and after", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T10:00:00.000Z"))
        const commerce = yield* Commerce
        const seller = yield* sellerWith("audited seller", [tier("one", 700)])
        const buyer = yield* fundedBuyer(5_000, ACCOUNT)
        yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" }, "owner")
        const buy = (n: number) =>
          commerce.buy({
            caller: buyer.caller,
            serviceId: seller.service.id,
            tierId: "one",
            input: { n }
          })
        const first = (yield* buy(1)).approval!
        const second = (yield* buy(2)).approval!
        yield* TestClock.adjust(60_000)
        const approved = yield* commerce.approve(owner, first.id)
        yield* TestClock.adjust(60_000)
        yield* commerce.decline(owner, second.id)
        // Refused decisions change nothing and are not in the trail: deciding again, or with a key.
        expect((yield* Effect.flip(commerce.approve(owner, first.id)))._tag).toBe("Conflict")
        expect((yield* Effect.flip(commerce.decline(buyer.caller, second.id)))._tag).toBe("Forbidden")

        const entries = yield* trail(buyer.agentId)
        const decisions = entries.filter((e) => e.action.startsWith("approval."))
        expect(decisions).toEqual([
          {
            id: expect.stringMatching(/^aud_/),
            agentId: buyer.agentId,
            action: "approval.declined",
            actor: { kind: "owner", id: ACCOUNT },
            subjectId: second.id,
            before: { status: "pending", serviceId: seller.service.id, tierId: "one", quotedPriceCents: 700 },
            after: { status: "declined", transactionId: null },
            createdAt: "2026-11-26T10:02:00.000Z"
          },
          {
            id: expect.stringMatching(/^aud_/),
            agentId: buyer.agentId,
            action: "approval.approved",
            actor: { kind: "owner", id: ACCOUNT },
            subjectId: first.id,
            before: { status: "pending", serviceId: seller.service.id, tierId: "one", quotedPriceCents: 700 },
            after: { status: "approved", transactionId: approved.transaction!.id },
            createdAt: "2026-11-26T10:01:00.000Z"
          }
        ])
      })
    )

    it.effect(
      "the agent may take back its own request while it waits: one entry by its key, nothing charged, and then nobody can approve it",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.parse("2026-11-26T10:00:00.000Z"))
          const commerce = yield* Commerce
          const seller = yield* sellerWith("withdrawn seller", [tier("one", 700)])
          const buyer = yield* fundedBuyer(5_000, ACCOUNT)
          const other = yield* fundedBuyer(0, ACCOUNT)
          yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" }, "owner")
          const buy = (n: number) =>
            Effect.map(
              commerce.buy({ caller: buyer.caller, serviceId: seller.service.id, tierId: "one", input: { n } }),
              (p) => p.approval!
            )
          const asked = yield* buy(1)
          // Not another agent's (even of the same account), nor the owner's: the owner declines instead.
          expect((yield* Effect.flip(commerce.withdrawApproval(other.caller, asked.id)))._tag).toBe("NotFound")
          expect((yield* Effect.flip(commerce.withdrawApproval(owner, asked.id)))._tag).toBe("NotFound")
          expect((yield* Effect.flip(commerce.withdrawApproval(buyer.caller, "apr_none")))._tag).toBe("NotFound")
          yield* TestClock.adjust(60_000)
          const withdrawn = yield* commerce.withdrawApproval(buyer.caller, asked.id)
          expect(withdrawn).toMatchObject({ id: asked.id, status: "withdrawn", decidedAt: "2026-11-26T10:01:00.000Z" })
          // Again: the same approval; the owner can no longer approve or decline it.
          expect(yield* commerce.withdrawApproval(buyer.caller, asked.id)).toMatchObject({ status: "withdrawn" })
          expect(yield* Effect.flip(commerce.approve(owner, asked.id))).toMatchObject({
            _tag: "Conflict",
            state: "withdrawn"
          })
          expect((yield* Effect.flip(commerce.decline(owner, asked.id)))._tag).toBe("Conflict")
          // A decided approval is not the agent's to take back.
          const approved = yield* buy(2)
          yield* commerce.approve(owner, approved.id)
          expect(yield* Effect.flip(commerce.withdrawApproval(buyer.caller, approved.id))).toMatchObject({
            _tag: "Conflict",
            state: "approved"
          })
          const entries = (yield* trail(buyer.agentId)).filter((e) => e.subjectId === asked.id)
          expect(entries).toEqual([
            {
              id: expect.stringMatching(/^aud_/),
              agentId: buyer.agentId,
              action: "approval.withdrawn",
              actor: { kind: "agent_key", id: `key_${buyer.agentId}` },
              subjectId: asked.id,
              before: { status: "pending", serviceId: seller.service.id, tierId: "one", quotedPriceCents: 700 },
              after: { status: "withdrawn", transactionId: null },
              createdAt: "2026-11-26T10:01:00.000Z"
            }
          ])
          // Only the approved purchase was charged.
          expect((yield* Effect.flatMap(Wallet, (w) => w.view(buyer.agentId))).balanceCents).toBe(5_000 - 700)
        })
    )

    it.effect("withdrawing and approving one request at the same moment: one outcome, charged at most once", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const seller = yield* sellerWith("raced seller", [tier("one", 700)])
        const buyer = yield* fundedBuyer(5_000, ACCOUNT)
        yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" }, "owner")
        for (let round = 0; round < 5; round++) {
          const asked = (yield* commerce.buy({
            caller: buyer.caller,
            serviceId: seller.service.id,
            tierId: "one",
            input: { round }
          })).approval!
          const [withdrew, approved] = yield* Effect.all(
            [
              Effect.result(commerce.withdrawApproval(buyer.caller, asked.id)),
              Effect.result(commerce.approve(owner, asked.id))
            ],
            { concurrency: 2 }
          )
          expect([withdrew._tag, approved._tag].filter((t) => t === "Success")).toHaveLength(1)
        }
        const page = yield* commerce.listApprovals(owner, undefined)
        const statuses = page.data.filter((a) => a.agentId === buyer.agentId).map((a) => a.status)
        const charged = statuses.filter((st) => st === "approved").length
        expect(statuses.every((st) => st === "approved" || st === "withdrawn")).toBe(true)
        expect((yield* Effect.flatMap(Wallet, (w) => w.view(buyer.agentId))).balanceCents).toBe(5_000 - 700 * charged)
      })
    )

    it.effect("an approval whose purchase the policy now refuses rolls back with its entry", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const seller = yield* sellerWith("limited seller", [tier("one", 900)])
        const buyer = yield* fundedBuyer(5_000, ACCOUNT)
        yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" }, "owner")
        const pending = (yield* commerce.buy({
          caller: buyer.caller,
          serviceId: seller.service.id,
          tierId: "one",
          input: null
        })).approval!
        yield* setPolicy(buyer.agentId, { perTransactionLimitCents: 500 }, "owner")
        expect((yield* Effect.flip(commerce.approve(owner, pending.id)))._tag).toBe("PolicyViolation")
        const entries = yield* trail(buyer.agentId)
        expect(entries.map((e) => e.action)).toEqual(["policy.changed", "policy.changed"])
      })
    )

    it.effect("a policy change is one entry with only the fields that changed, and who changed them", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T12:00:00.000Z"))
        const buyer = yield* fundedBuyer(0, ACCOUNT)
        const initial = yield* Effect.flatMap(Wallet, (w) => w.policyOf(buyer.agentId))
        yield* setPolicy(buyer.agentId, { dailyLimitCents: 4_000, autonomyLevel: "manual" }, "owner")
        yield* TestClock.adjust(1_000)
        yield* setPolicy(buyer.agentId, { dailyLimitCents: 3_000 }, "key") // a key may tighten
        // Refused or empty changes leave no entry: a key loosening, a daily above the monthly, a no-op.
        expect((yield* Effect.flip(setPolicy(buyer.agentId, { dailyLimitCents: 9_000 }, "key")))._tag).toBe("Forbidden")
        const invalid = setPolicy(buyer.agentId, { dailyLimitCents: 3_000, monthlyLimitCents: 1_000 }, "owner")
        expect((yield* Effect.flip(invalid))._tag).toBe("InvalidInput")
        yield* setPolicy(buyer.agentId, { dailyLimitCents: 3_000 }, "owner")

        const entries = yield* trail(buyer.agentId)
        expect(entries).toEqual([
          {
            id: expect.stringMatching(/^aud_/),
            agentId: buyer.agentId,
            action: "policy.changed",
            actor: { kind: "agent_key", id: `key_${buyer.agentId}` },
            subjectId: null,
            before: { dailyLimitCents: 4_000 },
            after: { dailyLimitCents: 3_000 },
            createdAt: "2026-11-26T12:00:01.000Z"
          },
          {
            id: expect.stringMatching(/^aud_/),
            agentId: buyer.agentId,
            action: "policy.changed",
            actor: { kind: "owner", id: ACCOUNT },
            subjectId: null,
            before: { dailyLimitCents: initial.dailyLimitCents, autonomyLevel: initial.autonomyLevel },
            after: { dailyLimitCents: 4_000, autonomyLevel: "manual" },
            createdAt: "2026-11-26T12:00:00.000Z"
          }
        ])
      })
    )

    it.effect(
      "a freeze and an unfreeze are each one entry naming who; a key may freeze but its unfreeze leaves none",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.parse("2026-11-26T13:00:00.000Z"))
          const buyer = yield* fundedBuyer(0, ACCOUNT)
          yield* setPolicy(buyer.agentId, { frozen: true }, "key")
          expect((yield* Effect.flip(setPolicy(buyer.agentId, { frozen: false }, "key")))._tag).toBe("Forbidden")
          yield* TestClock.adjust(1_000)
          yield* setPolicy(buyer.agentId, { frozen: false, dailyLimitCents: 2_000 }, "owner")
          yield* setPolicy(buyer.agentId, { frozen: false }, "owner") // already unfrozen: nothing changes
          const entries = yield* trail(buyer.agentId)
          expect(entries.map((e) => [e.action, e.actor, e.before?.frozen, e.after?.frozen])).toEqual([
            ["agent.unfrozen", { kind: "owner", id: ACCOUNT }, true, false],
            ["agent.frozen", { kind: "agent_key", id: `key_${buyer.agentId}` }, false, true]
          ])
          expect(entries[0].after).toMatchObject({ dailyLimitCents: 2_000 })
        })
    )

    it.effect("pages walk the whole trail newest first, entries of one millisecond in the order made", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-26T14:00:00.000Z"))
        const buyer = yield* fundedBuyer(0, ACCOUNT)
        // The clock stands still: 25 changes in the same millisecond, each to a known value.
        for (let i = 1; i <= 25; i++) yield* setPolicy(buyer.agentId, { approvalThresholdCents: i * 10 }, "owner")
        const entries = yield* trail(buyer.agentId, 7)
        expect(entries.map((e) => e.after?.approvalThresholdCents)).toEqual(
          Array.from({ length: 25 }, (_, i) => (25 - i) * 10)
        )
        expect(new Set(entries.map((e) => e.id)).size).toBe(25)
        const other = yield* fundedBuyer(0, ACCOUNT)
        expect(yield* trail(other.agentId)).toEqual([])
        const audit = yield* Audit
        expect((yield* Effect.flip(audit.list(buyer.agentId, { cursor: "not-a-cursor" })))._tag).toBe("InvalidInput")
      })
    )
  }
)
