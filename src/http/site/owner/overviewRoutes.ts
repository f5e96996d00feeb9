// The overview's routes: the page (every agent, the approvals inbox, refusals) and the stamp its
// script polls. Its forms (freeze, approve, decline) post to the agent's routes with return=overview.
import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect } from "effect"
import type { Caller } from "../../../services/keys/Caller.js"
import { Overview } from "../../../services/audit/Overview.js"
import { overviewData, overviewStamp } from "./data.js"
import { NOTICES } from "./pages.js"
import { OVERVIEW_PATH, renderOverviewPage } from "./overviewPage.js"
import { ownerSession } from "./request.js"
import { formTargetsOf, htmlPage, json, page } from "./respond.js"

export const overviewPage = Effect.fnUntraced(function* (
  caller: Caller,
  message: { readonly notice?: string; readonly error?: string },
  status = 200
) {
  const data = yield* overviewData(caller)
  return htmlPage(renderOverviewPage(data, message), status, yield* formTargetsOf)
})

export const overviewRoutes = [
  HttpRouter.route(
    "GET",
    OVERVIEW_PATH,
    page(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const request = yield* HttpServerRequest.HttpServerRequest
        const done = new URL(request.url, "http://x").searchParams.get("done")
        // Only fixed texts: nothing from the address is echoed into the page.
        const notice = done !== null && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined
        return yield* overviewPage(caller, notice ? { notice } : {})
      })
    )
  ),
  HttpRouter.route(
    "GET",
    `${OVERVIEW_PATH}/live.json`,
    json(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const overview = yield* Effect.flatMap(Overview, (o) => o.overview(caller.accountId))
        return { stamp: overviewStamp(overview) }
      })
    )
  )
]
