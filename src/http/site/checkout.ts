// Checkout pages: the fake processor's hosted page (/checkout/fake/:sessionId, Pay / Cancel) and
// the return pages the processor sends buyers back to (/checkout/success, /checkout/cancelled).
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, Layer } from "effect"
import { FAKE_TEST_CARDS } from "../../schema/payments/payments.js"
import { NotFound, Unauthorized } from "../../schema/platform/errors.js"
import { FakeCheckout, type FakeCheckoutOutcome, type FakeRequester } from "../../services/payments/FakeCheckout.js"
import type { FakeDelivery, FakeSession } from "../../services/payments/FakeProcessorStore.js"
import { Payments } from "../../services/payments/Payments.js"
import { Keys } from "../../services/keys/Keys.js"
import { RateLimiter } from "../../services/keys/RateLimiter.js"
import { errorResponse } from "../errors.js"
import { SESSION_COOKIE } from "../middleware/auth.js"
import { authenticateBearerWith, sessionCaller } from "../middleware/authLive.js"
import { currentRequestId } from "../requestId.js"
import { PLATFORM } from "../../services/discovery/document.js"
import { fundsNote, type Recharge, rechargeFor, returnNote, seeReturn } from "./checkoutRecharge.js"
import { html, type Part } from "./templates/html.js"
import { layout as siteLayout } from "./templates/layout.js"
import { cspOrigin, pageCsp } from "./templates/csp.js"

export const formatAmount = (amountCents: number, currency: string) =>
  `${(amountCents / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency.toUpperCase()}`

/** How often the return page asks again while the payment is pending. */
const RECHECK_SECONDS = 3
const SESSION_ID = /^[A-Za-z0-9_-]{3,255}$/
const FAILURE_CODE = /^[a-z_]{1,40}$/

/** The processor's page in the site's document layout, bare: no site navigation, its own stylesheet. */
const layout = (title: string, main: Part, options: { readonly recheck?: boolean } = {}) =>
  siteLayout({
    lang: "en",
    title,
    platformName: PLATFORM.name,
    version: PLATFORM.version,
    href: (path) => path,
    langInLinks: false,
    referrer: "no-referrer",
    noindex: true,
    bare: true,
    bodyClass: "checkout",
    stylesheets: ["/assets/checkout.css"],
    ...(options.recheck ? { scripts: ["/assets/checkout.js"] } : {}),
    main
  })

/** No scripts at all; the stylesheet and icon from this origin; forms post to this origin only. */
const cspWithFormAction = (formAction: ReadonlyArray<string>) => pageCsp({ formAction })
const CSP = cspWithFormAction(["'self'"])

/**
 * The hosted page's CSP. Browsers apply form-action to the redirect that answers a form post too,
 * so Pay / Cancel (posted to this page's own origin) are followed by a 303 to the session's return
 * address: that address's origin must be allowed as well. Without it, a page opened at 127.0.0.1
 * whose return address says localhost (BASE_URL) had its redirect blocked and Pay seemed to do
 * nothing. Only the session's own success and cancel origins are added.
 */
export const checkoutCsp = (s: Pick<FakeSession, "successUrl" | "cancelUrl">): string => {
  const origins = new Set(["'self'"])
  for (const url of [s.successUrl, s.cancelUrl]) {
    const origin = cspOrigin(url)
    if (origin) origins.add(origin)
  }
  return cspWithFormAction([...origins])
}

const htmlPage = (body: string, status = 200, csp = CSP) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { "cache-control": "no-store", "content-security-policy": csp, "referrer-policy": "no-referrer" }
  })

const notFoundPage = (message: string) =>
  htmlPage(layout("Checkout not found", html`<h1>Checkout not found</h1><p>${message}</p>`), 404)

const fakePage = (s: FakeSession, recharge?: Recharge) => {
  const per = s.mode === "subscription" ? " / month" : ""
  const head = html`<p><span class="test">TEST MODE — fake payment processor</span></p>
<h1>${s.description}</h1>
<div class="amount">${formatAmount(s.amountCents, s.currency)}${per}</div>
${recharge ? fundsNote(recharge) : ""}
${s.customerEmail ? html`<p class="muted">Receipt to ${s.customerEmail}</p>` : ""}`
  if (s.status !== "open") {
    const outcome =
      s.status === "expired"
        ? "This checkout expired or was cancelled."
        : s.paymentStatus === "paid"
          ? "This checkout is paid."
          : `The payment failed (${s.failureCode ?? "declined"}).`
    const next = s.status === "complete" && s.paymentStatus === "paid" ? s.successUrl : s.cancelUrl
    return layout("Checkout", html`${head}<p class="status">${outcome}</p><p><a href="${next}">Continue</a></p>`)
  }
  const options = FAKE_TEST_CARDS.map(
    (c, i) => html`<option value="${c.number}"${i === 0 ? html` selected` : ""}>${c.label}</option>`
  )
  return layout(
    "Checkout",
    html`${head}
<form method="post" action="/checkout/fake/${encodeURIComponent(s.id)}/pay">
<label for="card">Test card</label>
<select id="card" name="card">${options}</select>
<button class="pay" type="submit">Pay ${formatAmount(s.amountCents, s.currency)}</button>
</form>
<form method="post" action="/checkout/fake/${encodeURIComponent(s.id)}/cancel">
<button class="cancel" type="submit">Cancel</button>
</form>
<p class="muted">No money moves. Pay completes the session and sends a signed <code>checkout.session.completed</code> event to the
service's webhook handler, exactly as Stripe would; a declining test card sends <code>checkout.session.async_payment_failed</code>;
Cancel sends <code>checkout.session.expired</code>. Expires ${s.expiresAt}.</p>`
  )
}

const sessionIdParam = Effect.map(HttpRouter.params, (p) => p.sessionId ?? "")

/** Hands a fake-processor event to the same handler as POST /api/payments/webhook (verification included). */
const deliver = (delivery: FakeDelivery | undefined) =>
  delivery ? Effect.flatMap(Payments, (p) => p.handleWebhook(delivery.payload, delivery.signatureHeader)) : Effect.void

const redirect = (outcome: FakeCheckoutOutcome) =>
  Effect.flatMap(deliver(outcome.delivery), () => seeReturn(outcome.redirectUrl))

/** The decline code asked for: `?fail=<code>` (or a `fail` form field), or the chosen test card's. */
const requestedFailure = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = new URL(request.url, "http://x").searchParams
  const form = (request.headers["content-type"] ?? "").includes("application/x-www-form-urlencoded")
    ? new URLSearchParams(yield* request.text.pipe(Effect.orElseSucceed(() => "")))
    : new URLSearchParams()
  const fail = query.get("fail") ?? form.get("fail")
  if (fail !== null && fail !== "") return FAILURE_CODE.test(fail) ? fail : "card_declined"
  const card = (form.get("card") ?? "").replace(/\s+/g, "")
  return FAKE_TEST_CARDS.find((c) => c.number === card)?.failure
})

const withSession = <E, R>(f: (sessionId: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(sessionIdParam, (id) =>
    SESSION_ID.test(id)
      ? f(id).pipe(
          Effect.catch((e: unknown) => {
            const tag = (e as { _tag?: string })._tag
            const message = (e as { message?: string }).message ?? "unexpected error"
            if (tag === "NotFound") return Effect.succeed(notFoundPage(message))
            if (tag === "Conflict")
              return Effect.succeed(
                htmlPage(layout("Checkout closed", html`<h1>Checkout closed</h1><p>${message}</p>`), 409)
              )
            return Effect.succeed(
              htmlPage(layout("Checkout error", html`<h1>Something went wrong</h1><p>${message}</p>`), 503)
            )
          })
        )
      : Effect.succeed(notFoundPage("malformed checkout session id"))
  )

const credentialsNeeded = new Unauthorized({
  message:
    "this checkout's account only: send its agent's key (Authorization: Bearer <key>) or the dashboard session cookie"
})

/**
 * The account asking, from `Authorization: Bearer <key>` (any permission; a bad key is 401) or
 * else the dashboard session cookie; undefined when neither is sent.
 */
const requesterOf = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (request.headers.authorization !== undefined) {
    const caller = yield* Effect.flatMap(Keys, (keys) =>
      Effect.flatMap(RateLimiter, (limiter) =>
        authenticateBearerWith(keys, limiter, request.headers.authorization, null)
      )
    )
    return { accountId: caller.accountId } satisfies FakeRequester
  }
  const cookie = request.cookies[SESSION_COOKIE]
  if (cookie === undefined) return undefined
  return { accountId: (yield* sessionCaller(cookie)).accountId } satisfies FakeRequester
})

/** A fake-processor route that answers like the API: JSON error bodies with their status. */
const asJsonApi = <E, R>(f: (sessionId: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(sessionIdParam, (id) =>
    (SESSION_ID.test(id)
      ? f(id)
      : Effect.fail(new NotFound({ message: "malformed checkout session id", resource: "checkoutSession", id }))
    ).pipe(
      Effect.catch((e: unknown) =>
        Effect.map(currentRequestId, (requestId) => errorResponse(e, requestId, { "cache-control": "no-store" }))
      )
    )
  )

const fakeRoutes = [
  HttpRouter.route(
    "GET",
    "/checkout/fake/:sessionId",
    withSession(
      Effect.fnUntraced(function* (id) {
        const view = yield* Effect.flatMap(FakeCheckout, (page) => page.view(id))
        yield* deliver(view.delivery)
        return htmlPage(fakePage(view.session, yield* rechargeFor(id)), 200, checkoutCsp(view.session))
      })
    )
  ),
  HttpRouter.route(
    "POST",
    "/checkout/fake/:sessionId/pay",
    withSession(
      Effect.fnUntraced(function* (id) {
        const failure = yield* requestedFailure
        return yield* redirect(yield* Effect.flatMap(FakeCheckout, (page) => page.pay(id, { failure })))
      })
    )
  ),
  HttpRouter.route(
    "POST",
    "/checkout/fake/:sessionId/cancel",
    withSession((id) =>
      Effect.flatMap(
        Effect.flatMap(FakeCheckout, (page) => page.cancel(id)),
        redirect
      )
    )
  ),
  // Owner-only (the account's key or dashboard session), once per billing period; JSON errors.
  HttpRouter.route(
    "POST",
    "/checkout/fake/:sessionId/renew",
    asJsonApi(
      Effect.fnUntraced(function* (id) {
        const requester = yield* requesterOf
        if (requester === undefined) return yield* Effect.fail(credentialsNeeded)
        return yield* redirect(yield* Effect.flatMap(FakeCheckout, (page) => page.renew(id, requester)))
      })
    )
  ),
  // Every signed event the fake sent for a session (body + Stripe-Signature), to replay with curl:
  // to the session's account only (key or dashboard session); an anonymous session's to its id's holder.
  HttpRouter.route(
    "GET",
    "/checkout/fake/:sessionId/events",
    asJsonApi(
      Effect.fnUntraced(function* (id) {
        const deliveries = yield* Effect.flatMap(FakeCheckout, (page) =>
          Effect.flatMap(requesterOf, (requester) => page.deliveries(id, requester))
        )
        return HttpServerResponse.jsonUnsafe({ data: deliveries }, { headers: { "cache-control": "no-store" } })
      })
    )
  )
]

const returnPage = Effect.fnUntraced(function* (kind: "success" | "cancelled") {
  const request = yield* HttpServerRequest.HttpServerRequest
  const id = new URL(request.url, "http://x").searchParams.get("session_id") ?? ""
  if (!SESSION_ID.test(id)) return notFoundPage("missing or malformed session_id")
  const view = yield* Effect.flatMap(Payments, (p) => p.checkoutView(id)).pipe(Effect.result)
  if (view._tag === "Failure")
    return view.failure._tag === "NotFound"
      ? notFoundPage(view.failure.message)
      : htmlPage(layout("Checkout", html`<p>Try again shortly.</p>`), 503)
  const c = view.success
  const recharge = yield* rechargeFor(id)
  // Waiting for the processor: the page checks again by itself (browser/checkout.ts).
  const recheck = c.status === "pending" && kind === "success"
  const line =
    c.status === "paid"
      ? "Payment received. Thank you!"
      : c.status === "pending"
        ? kind === "success"
          ? "Payment submitted; waiting for the processor's confirmation…"
          : "The checkout was left without paying."
        : c.status === "failed"
          ? "The payment failed."
          : "The checkout expired or was cancelled."
  return htmlPage(
    layout(
      "Checkout",
      html`<h1>${c.description}</h1>
<div class="amount">${formatAmount(c.amountCents, c.currency)}</div>
<p class="status" data-status="${c.status}"${recheck ? html` data-recheck="${RECHECK_SECONDS}"` : ""}>${line}${recheck ? html` <a href="">Check again</a>` : ""}</p>
${recharge ? returnNote(recharge, c.status === "paid") : ""}
<p class="muted">Checkout session <code>${c.sessionId}</code> — status <code>${c.status}</code>.
${c.purpose === "knowledge" ? html`Check it any time with <code>GET /api/trpc/publicApi.purchaseStatus</code>.` : ""}</p>`,
      { recheck }
    )
  )
})

export const CheckoutRoutesLive = Layer.mergeAll(
  HttpRouter.addAll(fakeRoutes),
  HttpRouter.add("GET", "/checkout/success", returnPage("success")),
  HttpRouter.add("GET", "/checkout/cancelled", returnPage("cancelled"))
)
