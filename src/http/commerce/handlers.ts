// Handlers for the commerce groups: decode → call Catalog / Wallet / Commerce / Disputes / Reputation → return.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Catalog } from "../../services/commerce/Catalog.js"
import { Publishing } from "../../services/commerce/Publishing.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { Disputes } from "../../services/commerce/Disputes.js"
import { Keys } from "../../services/keys/Keys.js"
import { Reputation } from "../../services/reputation/Reputation.js"
import { Wallet } from "../../services/wallet/Wallet.js"
import { Api } from "../api.js"
import { securityEvent } from "../securityLog.js"
import { PaidPurchases } from "../../services/mpp/PaidPurchases.js"
import { currentIdempotencyKey, currentIdempotencyScope } from "../requestIdempotency.js"
import { challengeHeaders, paymentContext, receiptHeaders } from "../mpp/handlers.js"
import { servicePageResponse } from "./servicePage.js"

/** The request's Idempotency-Key with the caller it belongs to, for services that dedupe on it. */
const requestKey = Effect.gen(function* () {
  const key = yield* currentIdempotencyKey
  return key === undefined ? undefined : { key, scope: yield* currentIdempotencyScope }
})

/** Every route of the key group is behind AgentAuth, so the caller always has an agent. */
const agent = Effect.map(CurrentCaller, (caller) => caller.agentId!)

export const CommerceLive = HttpApiBuilder.group(Api, "commerce", (handlers) =>
  handlers
    .handle("listServices", ({ query: urlParams }) =>
      Effect.flatMap(Catalog, (c) => Effect.map(c.list(urlParams), servicePageResponse))
    )
    .handle("getService", ({ params: path }) => Effect.flatMap(Catalog, (c) => c.getService(path.id)))
    .handle("serviceSla", ({ params: path }) => Effect.flatMap(Catalog, (c) => c.sla(path.id)))
    .handle("publishService", ({ payload }) =>
      Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(Publishing, (p) => p.publish(caller, payload)))
    )
    .handle("updateService", ({ params: path, payload }) =>
      Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(Publishing, (p) => p.update(caller, path.id, payload)))
    )
    .handle("recommend", ({ query: urlParams }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Reputation, (r) => r.recommend(id, urlParams)))
    )
    .handle("wallet", () => Effect.flatMap(agent, (id) => Effect.flatMap(Wallet, (w) => w.view(id))))
    .handle("updateWallet", ({ payload }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Wallet, (w) =>
          Effect.flatMap(requestKey, (keyed) =>
            w.updatePolicy(caller.agentId!, payload, { byOwner: false, actorId: caller.keyId, keyed })
          )
        )
      )
    )
    .handle("topup", ({ payload }) =>
      Effect.flatMap(agent, (id) =>
        Effect.flatMap(Wallet, (w) => Effect.flatMap(requestKey, (key) => w.topup(id, payload.amountCents, key)))
      )
    )
    .handle(
      "buy",
      Effect.fnUntraced(function* ({ payload }) {
        const caller = yield* CurrentCaller
        const paid = yield* PaidPurchases
        const payment = yield* paymentContext
        const idempotencyKey = yield* currentIdempotencyKey
        const { purchase, receipt } = yield* paid
          .buy({
            caller,
            serviceId: payload.serviceId,
            tierId: payload.tierId,
            input: payload.input,
            negotiationId: payload.negotiationId,
            idempotencyKey,
            payment
          })
          .pipe(
            Effect.tapError((e) =>
              e._tag === "PolicyViolation"
                ? securityEvent("policy.denied", {
                    accountId: caller.accountId,
                    agentId: caller.agentId,
                    keyId: caller.keyId,
                    reason: e.message
                  })
                : e._tag === "PaymentRequired"
                  ? challengeHeaders(e)
                  : Effect.void
            )
          )
        if (receipt !== undefined) yield* receiptHeaders(receipt)
        return purchase
      })
    )
    .handle("approvals", ({ query: urlParams }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Commerce, (c) => c.listApprovals(caller, urlParams.status, urlParams))
      )
    )
    .handle("transactions", ({ query: urlParams }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Commerce, (c) => c.listTransactions(id, urlParams)))
    )
    .handle("transaction", ({ params: path }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Commerce, (c) => c.getTransaction(id, path.id)))
    )
    .handle("cancelPurchase", ({ params: path }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Commerce, (c) => c.cancelPurchase(id, path.id)))
    )
    .handle("withdrawApproval", ({ params: path }) =>
      Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(Commerce, (c) => c.withdrawApproval(caller, path.id)))
    )
    .handle("review", ({ params: path, payload }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Commerce, (c) => c.review(id, path.id, payload)))
    )
    .handle("openDispute", ({ payload }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Disputes, (d) => d.open(id, payload)))
    )
    .handle("disputes", ({ query: urlParams }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Disputes, (d) => d.list(id, urlParams)))
    )
    .handle("dispute", ({ params: path }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Disputes, (d) => d.get(id, path.id)))
    )
    .handle("respondDispute", ({ params: path, payload }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Disputes, (d) => d.respond(id, path.id, payload)))
    )
    .handle("stats", () => Effect.flatMap(agent, (id) => Effect.flatMap(Reputation, (r) => r.stats(id))))
    .handle("usage", ({ query: urlParams }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Reputation, (r) => r.usage(id, urlParams.days ?? 30)))
    )
    .handle("reputation", ({ query: urlParams }) =>
      Effect.flatMap(agent, (id) => Effect.flatMap(Reputation, (r) => r.reputationOf(urlParams.agentId ?? id)))
    )
    .handle("leaderboard", ({ query: urlParams }) =>
      Effect.flatMap(Reputation, (r) => r.leaderboard(urlParams.limit ?? 10))
    )
)

/** The agent must belong to the signed-in account (else 404). */
const ownedAgent = (agentId: string) =>
  Effect.flatMap(CurrentCaller, (caller) =>
    Effect.flatMap(Keys, (k) => Effect.as(k.ownedAgent(caller.accountId, agentId), agentId))
  )

export const CommerceDashboardLive = HttpApiBuilder.group(Api, "commerceDashboard", (handlers) =>
  handlers
    .handle("approvals", ({ query: urlParams }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Commerce, (c) => c.approvalsInbox(caller, urlParams.status, urlParams))
      )
    )
    .handle("approve", ({ params: path }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Commerce, (c) => Effect.flatMap(requestKey, (keyed) => c.approve(caller, path.id, keyed)))
      )
    )
    .handle("decline", ({ params: path }) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        Effect.flatMap(Commerce, (c) => Effect.flatMap(requestKey, (keyed) => c.decline(caller, path.id, keyed)))
      )
    )
    .handle("wallet", ({ params: path }) =>
      Effect.flatMap(ownedAgent(path.agentId), (id) => Effect.flatMap(Wallet, (w) => w.view(id)))
    )
    .handle("updateWallet", ({ params: path, payload }) =>
      Effect.flatMap(ownedAgent(path.agentId), (id) =>
        Effect.flatMap(CurrentCaller, (caller) =>
          Effect.flatMap(Wallet, (w) =>
            Effect.flatMap(requestKey, (keyed) =>
              w.updatePolicy(id, payload, { byOwner: true, actorId: caller.accountId, keyed })
            )
          )
        )
      )
    )
)
