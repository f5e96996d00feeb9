// The owner's side of the dashboard: one server-rendered page per agent (/agent-dashboard/agents/:agentId)
// with its wallet, freeze switch and policy, top-up through the payments layer's checkout, pending
// approvals with approve / decline, refused purchases, a 30-day spend chart against the daily limit,
// transactions (filters, a detail page), the audit trail with CSV export links, reviews and disputes;
// and the overview of every agent (owner/overviewRoutes.ts). Forms post to this origin with the
// session cookie; every handler calls the domain services and re-implements no rule. The pages stay
// current without a reload: their script (browser/owner.ts) polls a small stamp and redraws the
// parts that changed.
import { HttpRouter, HttpServerRequest } from "effect/http"
import { Clock, Effect } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import type { Caller } from "../../services/keys/Caller.js"
import { Audit } from "../../services/audit/Audit.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { Keys } from "../../services/keys/Keys.js"
import { Payments } from "../../services/payments/Payments.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { Wallet } from "../../services/wallet/Wallet.js"
import { agentPageData, agentStamp, pendingFor } from "./owner/data.js"
import { agentPath, deciderText, OWNER_PREFIX, usd } from "./owner/format.js"
import { RECHARGE_MAX_CENTS, RECHARGE_MIN_CENTS } from "../../schema/payments/payments.js"
import { NOTICES, renderAgentPage, renderTransactionPage } from "./owner/pages.js"
import { overviewPage, overviewRoutes } from "./owner/overviewRoutes.js"
import { OVERVIEW_PATH } from "./owner/overviewPage.js"
import { salesRoutes } from "./owner/salesRoutes.js"
import { filtersOf, originOf, ownerSession, parseDollars, policyBody, type TxFilters } from "./owner/request.js"
import { formAction, formTargetsOf, htmlPage, json, page, param, seeOther } from "./owner/respond.js"

/** Renders the agent page (status and message given, what the owner typed kept). */
const agentPage = Effect.fnUntraced(function* (
  caller: Caller,
  agentId: string,
  filters: TxFilters,
  message: { readonly notice?: string; readonly error?: string },
  status = 200,
  typed?: URLSearchParams
) {
  const data = yield* agentPageData(caller, agentId, filters)
  const now = yield* Clock.currentTimeMillis
  return htmlPage(renderAgentPage(data, message, now, typed), status, yield* formTargetsOf)
})

/** A refused form: the page it came from again, with the message and what was typed. */
const refused = Effect.fnUntraced(function* (
  caller: Caller,
  agentId: string,
  form: URLSearchParams,
  error: string,
  status: number
) {
  if (form.get("return") === "overview") return yield* overviewPage(caller, { error }, status)
  return yield* agentPage(caller, agentId, {}, { error }, status, form)
})

/** Back to the page the form was on, with a fixed notice. */
const backTo = (form: URLSearchParams, agentId: string, done: keyof typeof NOTICES, anchor: string) =>
  seeOther(
    form.get("return") === "overview"
      ? `${OVERVIEW_PATH}?done=${done}#${anchor === "wallet" ? "agents" : "inbox"}`
      : `${agentPath(agentId)}?done=${done}#${anchor}`
  )

/**
 * The processor's page on the host the owner is on: the fake processor is this server, so its
 * address at BASE_URL's origin becomes a path (the session cookie is the host's). Any other
 * address (Stripe's) is kept.
 */
const onThisHost = (checkoutUrl: string, baseUrl: string): string => {
  const origin = originOf(checkoutUrl)
  if (origin === undefined || origin !== originOf(baseUrl)) return checkoutUrl
  const u = new URL(checkoutUrl)
  return `${u.pathname}${u.search}`
}

export const OwnerRoutesLive = HttpRouter.addAll([
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId`,
    page(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agentId = yield* param("agentId")
        const request = yield* HttpServerRequest.HttpServerRequest
        const done = new URL(request.url, "http://x").searchParams.get("done")
        // Only fixed texts: nothing from the address is echoed into the page.
        const notice = done !== null && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined
        return yield* agentPage(caller, agentId, yield* filtersOf(request.url), notice ? { notice } : {})
      })
    )
  ),
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/transactions/:transactionId`,
    page(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agent = yield* Effect.flatMap(Keys, (k) =>
          Effect.flatMap(param("agentId"), (id) => k.ownedAgent(caller.accountId, id))
        )
        const tx = yield* Effect.flatMap(Commerce, (c) =>
          Effect.flatMap(param("transactionId"), (id) => c.getTransaction(agent.id, id))
        )
        // Who approved and when: the approval's entry in the audit trail (its newest page).
        const entry =
          tx.approvalId === null
            ? undefined
            : (yield* Effect.flatMap(Audit, (a) => a.list(agent.id, { limit: 100 }))).entries.find(
                (e) => e.subjectId === tx.approvalId && e.action === "approval.approved"
              )
        const decision = entry
          ? {
              by:
                entry.actor.kind === "owner"
                  ? deciderText(`account:${entry.actor.id ?? ""}`, caller.accountId)
                  : "the agent's key",
              at: entry.createdAt
            }
          : undefined
        return htmlPage(renderTransactionPage(agent, tx, decision))
      })
    )
  ),
  // The agent's pending approvals, nothing else (JSON; 401 when signed out): for scripts and the tests.
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/approvals.json`,
    json(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agentId = yield* param("agentId")
        yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
        const pending = yield* pendingFor(caller, agentId)
        return {
          pending: pending.map((a) => ({
            id: a.id,
            serviceId: a.serviceId,
            tierId: a.tierId,
            quotedPriceCents: a.quotedPriceCents,
            reason: a.reason,
            createdAt: a.createdAt,
            expiresAt: a.expiresAt
          }))
        }
      })
    )
  ),
  // Polled by /assets/owner.js: a stamp of what the page shows; when it changes, the page's parts are redrawn.
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/live.json`,
    json(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agentId = yield* param("agentId")
        yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
        return { stamp: yield* agentStamp(caller, agentId) }
      })
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/policy`,
    formAction(
      Effect.fnUntraced(function* (caller, agentId, form) {
        const body = yield* policyBody(form)
        yield* Effect.flatMap(Wallet, (w) =>
          w.updatePolicy(agentId, body, { byOwner: true, actorId: caller.accountId })
        )
        return backTo(form, agentId, "policy", "policy")
      }),
      refused
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/freeze`,
    formAction(
      Effect.fnUntraced(function* (caller, agentId, form) {
        const frozen = form.get("frozen")
        if (frozen !== "true" && frozen !== "false")
          return yield* Effect.fail(new InvalidInput({ message: "frozen: must be true or false", field: "frozen" }))
        yield* Effect.flatMap(Wallet, (w) =>
          w.updatePolicy(agentId, { frozen: frozen === "true" }, { byOwner: true, actorId: caller.accountId })
        )
        return backTo(form, agentId, frozen === "true" ? "frozen" : "unfrozen", "wallet")
      }),
      refused
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/topup`,
    formAction(
      Effect.fnUntraced(function* (_caller, agentId, form) {
        const amountCents = yield* parseDollars("amount", form.get("amount"), 0)
        const idempotency = yield* requestIdempotency
        const checkout = yield* Effect.flatMap(Payments, (p) =>
          p.startRecharge({ agentId, amountCents }, idempotency)
        ).pipe(
          Effect.mapError((e) =>
            e._tag === "InvalidInput" && e.field === "amountCents"
              ? new InvalidInput({
                  message: `Top-up amount: “${form.get("amount") ?? ""}” is outside ${usd(RECHARGE_MIN_CENTS)} to ${usd(RECHARGE_MAX_CENTS)}`,
                  field: "amount"
                })
              : e
          )
        )
        const config = yield* AppConfig
        // To the processor's page (the fake's, or Stripe's); it returns to /checkout/success.
        return seeOther(onThisHost(checkout.checkoutUrl, config.baseUrl))
      }),
      refused
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/approvals/:approvalId/:decision`,
    formAction(
      Effect.fnUntraced(function* (caller, _agentId, form) {
        const decision = yield* param("decision")
        const approvalId = yield* param("approvalId")
        if (decision !== "approve" && decision !== "decline") {
          return yield* Effect.fail(
            new InvalidInput({ message: "decision: must be approve or decline", field: "decision" })
          )
        }
        const decided = yield* Effect.flatMap(Commerce, (c) =>
          decision === "approve" ? c.approve(caller, approvalId) : c.decline(caller, approvalId)
        )
        return backTo(
          form,
          decided.approval.agentId,
          decision === "approve" ? "approved" : "declined",
          decision === "approve" ? "transactions" : "approvals"
        )
      }),
      refused
    )
  ),
  ...overviewRoutes,
  ...salesRoutes
])
