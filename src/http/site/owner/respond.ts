// How the owner's pages answer: HTML with the owner pages' CSP, a service's failure as a page with
// its status and a message in the owner's words, the signed-out redirect, and form posts that
// re-render the page they came from (with what the owner typed) when the service refuses.
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { AppConfig } from "../../../services/platform/AppConfig.js"
import type { Caller } from "../../../services/keys/Caller.js"
import { Keys } from "../../../services/keys/Keys.js"
import { dashboardHeaders } from "../dashboard.js"
import { html } from "../templates/html.js"
import { pageCsp } from "../templates/csp.js"
import { ownerMessage } from "./format.js"
import { layout } from "./pages.js"
import { formOf, originOf, ownerSession, type SignedOut } from "./request.js"

export const htmlPage = (body: string, status = 200, formTargets: ReadonlyArray<string> = []) =>
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

export const formTargetsOf = Effect.map(AppConfig, (config) =>
  [originOf(config.baseUrl), config.payments === "stripe" ? "https://checkout.stripe.com" : undefined].filter(
    (o): o is string => o !== undefined
  )
)

export const statusOf = (e: { readonly _tag: string }): number =>
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

type Failure = { readonly _tag: string; readonly message?: string }
const messageOf = (e: Failure): string => ownerMessage(e.message ?? e._tag)

const errorPage = (status: number, message: string) =>
  htmlPage(
    layout(
      "Agent dashboard",
      html`<h1>Something is not right</h1><p class="msg msg-error" role="alert">${message}</p><p><a href="/agent-dashboard/overview">Back to the overview</a></p>`
    ),
    status
  )

const toSignIn = HttpServerResponse.empty({
  status: 303,
  headers: { location: "/agent-dashboard", "cache-control": "no-store" }
})

/** Runs a page handler: signed-out → the sign-in page; a typed failure → a page with its status and message. */
export const page = <E extends Failure, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E | SignedOut, R>
) =>
  handler.pipe(
    Effect.catch((e: E | SignedOut) =>
      e._tag === "SignedOut" ? Effect.succeed(toSignIn) : Effect.succeed(errorPage(statusOf(e), messageOf(e)))
    )
  )

/** A small JSON answer for the pages' scripts (401 when signed out, the service's status otherwise). */
export const json = <E extends Failure, R>(handler: Effect.Effect<unknown, E | SignedOut, R>) =>
  handler.pipe(
    Effect.map((body) => HttpServerResponse.jsonUnsafe(body, { headers: { "cache-control": "no-store" } })),
    Effect.catch((e: E | SignedOut) =>
      Effect.succeed(
        HttpServerResponse.jsonUnsafe(
          { type: e._tag === "SignedOut" ? "Unauthorized" : e._tag, message: e.message ?? "sign in again" },
          { status: e._tag === "SignedOut" ? 401 : statusOf(e), headers: { "cache-control": "no-store" } }
        )
      )
    )
  )

export const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

/** Redirects after a form did what it said; only fixed notices travel in the address. */
export const seeOther = (location: string) =>
  HttpServerResponse.empty({ status: 303, headers: { location, "cache-control": "no-store" } })

/**
 * A form that changes something about one of the owner's agents: the session, the agent (404 when
 * not theirs), same origin, then the service call. Its refusal is answered by `refused` (the page
 * the form was on, the message, what was typed) with the refusal's status.
 */
export const formAction = <E extends Failure, R, E2 extends Failure, R2>(
  act: (
    caller: Caller,
    agentId: string,
    form: URLSearchParams
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  refused: (
    caller: Caller,
    agentId: string,
    form: URLSearchParams,
    error: string,
    status: number
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E2, R2>
) =>
  page(
    Effect.gen(function* () {
      const caller = yield* ownerSession
      const agentId = yield* param("agentId")
      yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, agentId))
      const form = yield* formOf
      const result = yield* Effect.result(act(caller, agentId, form))
      if (result._tag === "Success") return result.success
      const e = result.failure as Failure
      return yield* refused(caller, agentId, form, messageOf(e), statusOf(e))
    })
  )
