// The routes of the seller's side of the owner's agent page: every pending order, a page at a time,
// and the board as JSON for scripts (session; 401 signed out, 404 not the account's agent, 400 a
// bad cursor or limit). The section itself: sales.ts.
import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect, Schema } from "effect"
import { type SellerBoard as Board, SellerBoardUrlParams } from "../../../schema/orders/sellerBoard.js"
import { InvalidInput } from "../../../schema/platform/errors.js"
import { Keys } from "../../../services/keys/Keys.js"
import { SellerBoard } from "../../../services/purchases/SellerBoard.js"
import { firstSchemaIssue } from "../../errors.js"
import { html } from "../templates/html.js"
import { agentPath, OWNER_PREFIX, usd } from "./format.js"
import { layout } from "./pages.js"
import { ownerSession } from "./request.js"
import { htmlPage, json, page, param } from "./respond.js"
import { orderList } from "./sales.js"

/** All pending orders, a page at a time (oldest first). */
const renderOrdersPage = (agent: { readonly id: string; readonly name: string }, b: Board): string => {
  const path = agentPath(agent.id)
  return layout(
    `${agent.name}: pending orders`,
    html`<nav class="crumbs" aria-label="Owner pages"><a href="${path}#sales">← ${agent.name}</a></nav>
<h1>Orders waiting for ${agent.name} <span class="badge">${b.pending.count}</span></h1>
<p class="lead">Oldest first: the order the agent should answer them in. ${usd(b.earnings.heldCents)} held for the agent in all.</p>
${orderList(b.pending.orders, "No more orders waiting.", "orders-body")}
${b.pending.nextCursor ? html`<p><a href="${path}/orders?cursor=${encodeURIComponent(b.pending.nextCursor)}">Next orders →</a></p>` : ""}`
  )
}

/** `cursor` and `limit` from the address, decoded (a bad one is 400 naming it). */
const boardQuery = Effect.gen(function* () {
  const q = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
  const raw = Object.fromEntries(["cursor", "limit"].flatMap((k) => (q.get(k) ? [[k, q.get(k)]] : [])))
  return yield* Schema.decodeUnknownEffect(SellerBoardUrlParams)(raw).pipe(
    Effect.mapError((e) => {
      const { path, message } = firstSchemaIssue(e)
      return new InvalidInput({ message: `${path ?? "query"}: ${message}`, field: path ?? "query" })
    })
  )
})

export const salesRoutes = [
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/orders`,
    page(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agent = yield* Effect.flatMap(Keys, (k) =>
          Effect.flatMap(param("agentId"), (id) => k.ownedAgent(caller.accountId, id))
        )
        const { cursor } = yield* boardQuery
        const board = yield* Effect.flatMap(SellerBoard, (s) =>
          s.board(caller.accountId, agent.id, { cursor, limit: 50 })
        )
        return htmlPage(renderOrdersPage(agent, board))
      })
    )
  ),
  // The board as JSON (401 signed out, 404 not the account's agent, 400 a cursor it did not give).
  HttpRouter.route(
    "GET",
    `${OWNER_PREFIX}/:agentId/sales.json`,
    json(
      Effect.gen(function* () {
        const caller = yield* ownerSession
        const agentId = yield* param("agentId")
        const options = yield* boardQuery
        return yield* Effect.flatMap(SellerBoard, (s) => s.board(caller.accountId, agentId, options))
      })
    )
  )
]
