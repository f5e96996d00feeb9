// Domain dedupe of the wallet policy change and of the owner's approve / decline, on every storage.
// The promise: a keyed request that committed but whose answer was lost (a failover between COMMIT
// and the reply, the idempotency record lost or left unfinished), retried with the same key and
// body, gets the first outcome — a policy change is not applied again over a change made since, an
// approval answers the decision made (200 with its transaction, charged once) instead of 409 — and
// the same key with another request is refused 422. A refused approval leaves its key free and its
// refusal on the owner's list.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { Agent } from "../../src/schema/keys/keys.js"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { IdempotencyKeyReused } from "../../src/schema/platform/errors.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { NoNegotiatedPrices } from "../../src/services/purchases/NegotiatedPrices.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Refusals } from "../../src/services/refusals/Refusals.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { commerceServices, fundedBuyer, ownerCaller, sellerWith, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

let n = 0
/** A fresh account (the suite's storage outlives each test) and the scopes its keys belong to. */
const newAccount = () => {
  const accountId = `acct_dedupe_${++n}_${Math.random().toString(36).slice(2, 8)}`
  return { accountId, owner: ownerCaller(accountId), ownerScope: `owner-${accountId}` }
}

forEachStorage(
  "domain dedupe: wallet policy and approvals",
  (storage) =>
    Layer.mergeAll(commerceServices, Refusals.layer).pipe(
      Layer.provideMerge(NoNegotiatedPrices),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    const balance = (agentId: string) => Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId)))

    /** A buyer whose purchases wait for its owner, and one purchase waiting. */
    const waitingPurchase = (fundsCents: number, priceCents = 300) =>
      Effect.gen(function* () {
        const account = newAccount()
        const { service } = yield* sellerWith("Dedupe Approvals", [tier("t", priceCents)])
        const buyer = yield* fundedBuyer(fundsCents, account.accountId)
        // Registered with its account: the owner's list of refusals is the account's agents'.
        const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        const keys = yield* KeysStore
        const email = `${account.accountId}@owners.invalid`
        yield* keys.insertAccount({
          id: account.accountId,
          email,
          name: "o",
          passwordHash: "-",
          planId: null,
          createdAt
        })
        yield* keys.insertAgent(
          Agent.make({ id: buyer.agentId, accountId: account.accountId, name: "buyer", organization: null, createdAt })
        )
        yield* Effect.flatMap(Wallet, (w) =>
          w.updatePolicy(buyer.agentId, { autonomyLevel: "manual" }, { byOwner: true })
        )
        const purchase = yield* Effect.flatMap(Commerce, (c) =>
          c.buy({ caller: buyer.caller, serviceId: service.id, tierId: "t", input: null })
        )
        expect(purchase.status).toBe("pending_approval")
        return { ...account, buyer, approvalId: purchase.approval!.id }
      })

    it.effect("the owner's policy change retried after another change: the change in between stays", () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const { owner, ownerScope } = newAccount()
        const buyer = yield* fundedBuyer(1_000, owner.accountId)
        const keyed = { key: "policy-1", scope: ownerScope }
        const asOwner = { byOwner: true, actorId: owner.accountId }
        const first = yield* wallet.updatePolicy(
          buyer.agentId,
          { dailyLimitCents: 500 as never },
          { ...asOwner, keyed }
        )
        expect(first.policies.dailyLimitCents).toBe(500)
        // The owner changes the limit again, with another key, before the first request's retry.
        yield* wallet.updatePolicy(
          buyer.agentId,
          { dailyLimitCents: 800 as never },
          { ...asOwner, keyed: { key: "policy-2", scope: ownerScope } }
        )
        const retry = yield* wallet.updatePolicy(
          buyer.agentId,
          { dailyLimitCents: 500 as never },
          { ...asOwner, keyed }
        )
        expect(retry.policies.dailyLimitCents, "the wallet as it stands: not set back to 500").toBe(800)
        expect((yield* wallet.view(buyer.agentId)).policies.dailyLimitCents).toBe(800)
        const other = yield* Effect.flip(
          wallet.updatePolicy(buyer.agentId, { dailyLimitCents: 600 as never }, { ...asOwner, keyed })
        )
        expect(other, "the same key, another body").toBeInstanceOf(IdempotencyKeyReused)
        expect((yield* wallet.view(buyer.agentId)).policies.dailyLimitCents).toBe(800)
        // Without a key every call writes.
        yield* wallet.updatePolicy(buyer.agentId, { dailyLimitCents: 500 as never }, asOwner)
        expect((yield* wallet.view(buyer.agentId)).policies.dailyLimitCents).toBe(500)
      })
    )

    it.effect("an agent's tightening retried after its owner loosened: the owner's limit stays", () =>
      Effect.gen(function* () {
        const wallet = yield* Wallet
        const { owner } = newAccount()
        const buyer = yield* fundedBuyer(1_000, owner.accountId)
        const keyed = { key: "tighten-1", scope: `agent-${buyer.agentId}` }
        const asAgent = { byOwner: false, actorId: buyer.caller.keyId, keyed }
        yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 300 as never }, asAgent)
        yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 1_000 as never }, { byOwner: true })
        const retry = yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 300 as never }, asAgent)
        expect(retry.policies.perTransactionLimitCents).toBe(1_000)
        // A refused change (an agent loosening) leaves its key free for the corrected request.
        const loosen = { byOwner: false, actorId: buyer.caller.keyId, keyed: { ...keyed, key: "tighten-2" } }
        const refused = yield* Effect.flip(
          wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 2_000 as never }, loosen)
        )
        expect(refused._tag).toBe("Forbidden")
        const corrected = yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 900 as never }, loosen)
        expect(corrected.policies.perTransactionLimitCents).toBe(900)
      })
    )

    it.effect("an approval retried with its key: the first decision and its transaction, charged once, not 409", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const { owner, ownerScope, buyer, approvalId } = yield* waitingPurchase(1_000)
        const keyed = { key: "approve-1", scope: ownerScope }
        const first = yield* commerce.approve(owner, approvalId, keyed)
        expect(first.approval.status).toBe("approved")
        expect(first.transaction).toMatchObject({ status: "completed", priceCents: 300, approvalId })
        const retry = yield* commerce.approve(owner, approvalId, keyed)
        expect(retry.approval).toMatchObject({ id: approvalId, status: "approved" })
        expect(retry.transaction?.id, "the same transaction").toBe(first.transaction!.id)
        expect(yield* balance(buyer.agentId), "charged once").toBe(700)
        // Another key is another request: the approval is decided (409), as before.
        const again = yield* Effect.flip(commerce.approve(owner, approvalId, { key: "approve-2", scope: ownerScope }))
        expect(again).toMatchObject({ _tag: "Conflict", state: "approved" })
        // The same key for another decision, or another approval, is refused.
        const declineSameKey = yield* Effect.flip(commerce.decline(owner, approvalId, keyed))
        expect(declineSameKey).toBeInstanceOf(IdempotencyKeyReused)
        const other = yield* waitingPurchase(1_000)
        const otherApproval = yield* Effect.flip(commerce.approve(owner, other.approvalId, keyed))
        expect(otherApproval).toBeInstanceOf(IdempotencyKeyReused)
        expect(yield* balance(buyer.agentId)).toBe(700)
      })
    )

    it.effect("a decline retried with its key: the same declined approval, nothing charged", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const { owner, ownerScope, buyer, approvalId } = yield* waitingPurchase(1_000)
        const keyed = { key: "decline-1", scope: ownerScope }
        const first = yield* commerce.decline(owner, approvalId, keyed)
        expect(first.approval.status).toBe("declined")
        const retry = yield* commerce.decline(owner, approvalId, keyed)
        expect(retry).toMatchObject({ approval: { id: approvalId, status: "declined" }, transaction: null })
        expect(yield* balance(buyer.agentId)).toBe(1_000)
        const approveSameKey = yield* Effect.flip(commerce.approve(owner, approvalId, keyed))
        expect(approveSameKey).toBeInstanceOf(IdempotencyKeyReused)
      })
    )

    it.effect("an approval the wallet refused: its refusal kept, its key free for the approval after the fix", () =>
      Effect.gen(function* () {
        const commerce = yield* Commerce
        const wallet = yield* Wallet
        const { owner, ownerScope, buyer, approvalId } = yield* waitingPurchase(1_000)
        yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 100 as never }, { byOwner: true })
        const keyed = { key: "approve-refused", scope: ownerScope }
        const refused = yield* Effect.flip(commerce.approve(owner, approvalId, keyed))
        expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "perTransactionLimit" })
        const kept = yield* Effect.flatMap(Refusals, (r) => r.list(owner.accountId, { agentId: buyer.agentId }))
        expect(kept.refusals.map((r) => [r.path, r.reason])).toEqual([["approval", "per_purchase_limit"]])
        expect((yield* commerce.listApprovals(owner, "pending")).data.map((a) => a.id)).toEqual([approvalId])
        yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 500 as never }, { byOwner: true })
        const approved = yield* commerce.approve(owner, approvalId, keyed)
        expect(approved.approval.status).toBe("approved")
        expect(approved.transaction).toMatchObject({ priceCents: 300 })
        expect(yield* balance(buyer.agentId)).toBe(700)
        const after = yield* Effect.flatMap(Refusals, (r) => r.list(owner.accountId, { agentId: buyer.agentId }))
        expect(after.refusals, "the refusal is still on the owner's list").toHaveLength(1)
      })
    )
  }
)
