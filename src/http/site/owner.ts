// The owner's side of the dashboard: one server-rendered page per agent (/agent-dashboard/agents/:agentId)
// with its wallet and policy, top-up through the payments layer's checkout, pending approvals with
// approve / decline, a 30-day spend chart against the daily limit, transactions (filters, a detail page),
// reviews and disputes. Forms post to this origin with the session cookie; every handler calls the
// domain services (Wallet, Commerce, Payments, Reputation, Disputes, Keys) and re-implements no rule.
// New approvals appear without a reload: the page's script (browser/owner.ts) polls a small JSON endpoint.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Clock, Effect } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import type { Caller } from "../../services/keys/Caller.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { Keys } from "../../services/keys/Keys.js"
import { Payments } from "../../services/payments/Payments.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { Wallet } from "../../services/wallet/Wallet.js"
import { dashboardHeaders } from "./dashboard.js"
import { html } from "./templates/html.js"
import { pageCsp } from "./templates/csp.js"
import { agentPageData, pendingFor } from "./owner/data.js"
import { agentPath, OWNER_PREFIX } from "./owner/format.js"
import { layout, NOTICES, renderAgentPage, renderTransactionPage } from "./owner/pages.js"
import {
  filtersOf,
  formOf,
  originOf,
  ownerSession,
  parseDollars,
  policyBody,
  type SignedOut,
  type TxFilters
} from "./owner/request.js"

const htmlPage = (body: string, status = 200, formTargets: ReadonlyArray<string> = []) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on the page's own
    // form posts, and the same-origin check needs the real origin. Other sites still get no referrer.
    headers: { ...dashboardHeaders, "content-security-policy": ownerCsp(formTargets), "referrer-policy": "same-origin" }
  })

/**
 * The page's CSP: the dashboard's (scripts, styles, fetches from this origin only), with form-action
 * widened to where a form's answer redirects: this origin, BASE_URL's (the page may be open at
 * another host name) and the checkout's (top-up answers with a 303 to it; browsers apply form-action
 * to that redirect too).
 */
const ownerCsp = (formTargets: ReadonlyArray<string>) =>
  pageCsp({ connect: true, formAction: ["'self'", ...formTargets] })

const formTargetsOf = Effect.map(AppConfig, (config) =>
  [originOf(config.baseUrl), config.payments === "stripe" ? "https://checkout.stripe.com" : undefined].filter(
    (o): o is string => o !== undefined
  )
)

const statusOf = (e: { readonly _tag: string }): number =>
  e._tag === "NotFound"
    ? 404
    : e._tag === "Forbidden" || e._tag === "PolicyViolation"
      ? 403
      : e._tag === "Conflict" || e._tag === "NegotiationUnusable"
        ? 409
        : e._tag === "InsufficientCredits"
          ? 402
          : e._tag === "StorageUnavailable"
            ? 503
            : 400

const errorPage = (status: number, message: string) =>
  htmlPage(
    layout(
      "Agent dashboard",
      html`<h1>Something is not right</h1><p class="msg msg-error" role="alert">${message}</p><p><a href="/agent-dashboard">Back to the dashboard</a></p>`
    ),
    status
  )

const toSignIn = HttpServerResponse.empty({
  status: 303,
  headers: { location: "/agent-dashboard", "cache-control": "no-store" }
})

/** Renders the agent page (status and message given), or an error page when even that cannot be read. */
const agentPage = Effect.fnUntraced(function* (
  caller: Caller,
  agentId: string,
  filters: TxFilters,
  message: { readonly notice?: string; readonly error?: string },
  status = 200
) {
  const data = yield* agentPageData(caller, agentId, filters)
  const now = yield* Clock.currentTimeMillis
  return htmlPage(renderAgentPage(data, message, now), status, yield* formTargetsOf)
})

/** Runs a page handler: signed-out → the sign-in page; a typed failure → a page with its status and message. */
const page = <E extends { readonly _tag: string; readonly message?: string }, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E | SignedOut, R>
) =>
  handler.pipe(
    Effect.catch((e: E | SignedOut) =>
      e._tag === "SignedOut"
        ? Effect.succeed(toSignIn)
        : Effect.succeed(errorPage(statusOf(e), (e as { message?: string }).message ?? e._tag))
    )
  )

const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

/**
 * A form that changes something: same origin, then the service call; its failure re-renders the
 * agent page with the message and status.
 */
const formAction = <E extends { readonly _tag: string; readonly message?: string }, R>(
  act: (
    caller: Caller,
    agentId: string,
    form: URLSearchParams
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  page(
    Effect.gen(function* () {
      const caller = yield* ownerSession
      const agentId = yield* param("agentId")
      yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
      const result = yield* Effect.result(Effect.flatMap(formOf, (form) => act(caller, agentId, form)))
      if (result._tag === "Success") return result.success
      const e = result.failure as { readonly _tag: string; readonly message?: string }
      return yield* agentPage(caller, agentId, {}, { error: e.message ?? e._tag }, statusOf(e))
    })
  )

const backTo = (agentId: string, done: keyof typeof NOTICES, anchor: string) =>
  HttpServerResponse.empty({
    status: 303,
    headers: { location: `${agentPath(agentId)}?done=${done}#${anchor}`, "cache-control": "no-store" }
  })

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
        return htmlPage(renderTransactionPage(agent, tx))
      })
    )
  ),
  // Polled by /assets/owner.js: the agent's pending approvals, nothing else (JSON; 401 when signed out).
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/approvals.json`,
    Effect.gen(function* () {
      const caller = yield* ownerSession
      const agentId = yield* param("agentId")
      yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
      const pending = yield* pendingFor(caller, agentId)
      return HttpServerResponse.jsonUnsafe(
        {
          pending: pending.map((a) => ({
            id: a.id,
            serviceId: a.serviceId,
            tierId: a.tierId,
            quotedPriceCents: a.quotedPriceCents,
            reason: a.reason,
            createdAt: a.createdAt,
            expiresAt: a.expiresAt
          }))
        },
        { headers: { "cache-control": "no-store" } }
      )
    }).pipe(
      Effect.catch((e: { readonly _tag: string; readonly message?: string }) =>
        Effect.succeed(
          HttpServerResponse.jsonUnsafe(
            { type: e._tag === "SignedOut" ? "Unauthorized" : e._tag, message: e.message ?? "sign in again" },
            { status: e._tag === "SignedOut" ? 401 : statusOf(e) }
          )
        )
      )
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
        return backTo(agentId, "policy", "policy")
      })
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/topup`,
    formAction(
      Effect.fnUntraced(function* (_caller, agentId, form) {
        const amountCents = yield* parseDollars("amount", form.get("amount"), 0)
        const idempotency = yield* requestIdempotency
        const checkout = yield* Effect.flatMap(Payments, (p) => p.startRecharge({ agentId, amountCents }, idempotency))
        // To the processor's page (the fake's, or Stripe's); it returns to /checkout/success.
        return HttpServerResponse.empty({
          status: 303,
          headers: { location: checkout.checkoutUrl, "cache-control": "no-store" }
        })
      })
    )
  ),
  HttpRouter.route(
    "POST",
    `${OWNER_PREFIX}/:agentId/approvals/:approvalId/:decision`,
    formAction(
      Effect.fnUntraced(function* (caller, _agentId, _form) {
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
          decided.approval.agentId,
          decision === "approve" ? "approved" : "declined",
          decision === "approve" ? "transactions" : "approvals"
        )
      })
    )
  )
])
