// The checkout pages' side of a wallet top-up started on the owner's page: which agent it funds and
// its balance (for the owner only), and return addresses that keep the person on the host they used.
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Keys } from "../../services/keys/Keys.js"
import { Payments } from "../../services/payments/Payments.js"
import { Wallet } from "../../services/wallet/Wallet.js"
import { SESSION_COOKIE } from "../middleware/auth.js"
import { sessionCaller } from "../middleware/authLive.js"
import { html } from "./templates/html.js"
import { agentPath, usd } from "./owner/format.js"

/** A wallet top-up seen by the owner of its agent (the dashboard session): the agent and its balance now. */
export interface Recharge {
  readonly agentId: string
  readonly agentName: string
  readonly balanceCents: number
}

/**
 * The top-up this checkout is, when the person looking is the account that started it (signed in
 * to the dashboard on this host); undefined otherwise, so nobody else learns whose wallet it funds.
 */
export const rechargeFor = Effect.fnUntraced(
  function* (sessionId: string) {
    const request = yield* HttpServerRequest.HttpServerRequest
    const cookie = request.cookies[SESSION_COOKIE]
    if (cookie === undefined || cookie === "") return undefined
    const record = yield* Effect.flatMap(Payments, (p) => p.getCheckout(sessionId))
    if (record?.purpose !== "recharge" || record.agentId === null) return undefined
    const caller = yield* sessionCaller(cookie)
    if (caller.accountId !== record.accountId) return undefined
    const agent = yield* Effect.flatMap(Keys, (k) => k.ownedAgent(caller.accountId, record.agentId!))
    const wallet = yield* Effect.flatMap(Wallet, (w) => w.view(agent.id))
    return { agentId: agent.id, agentName: agent.name, balanceCents: wallet.balanceCents } satisfies Recharge
  },
  Effect.orElseSucceed((): Recharge | undefined => undefined)
)

/**
 * The return address as the browser should follow it: a session's success and cancel pages are
 * this server's (BASE_URL), so at BASE_URL's origin the address becomes a path and the person stays
 * on the host they opened the checkout at (where their dashboard session lives). Any other address
 * is followed as given.
 */
const returnAddress = (url: string, baseUrl: string): string => {
  try {
    const u = new URL(url)
    return u.origin === new URL(baseUrl).origin ? `${u.pathname}${u.search}` : url
  } catch {
    return url
  }
}

/** On the processor's page: whose wallet the payment funds. */
export const fundsNote = (r: Recharge) =>
  html`<p class="funds">Funds the wallet of agent <strong>${r.agentName}</strong> (balance now ${usd(r.balanceCents)}).</p>`

/** On the return page: the agent, its new balance, and the way back to its page (a path: this host). */
export const returnNote = (r: Recharge, paid: boolean) =>
  html`<p class="funds">${paid ? html`Added to <strong>${r.agentName}</strong>'s wallet. Balance now <strong id="new-balance">${usd(r.balanceCents)}</strong>.` : html`For <strong>${r.agentName}</strong>'s wallet (balance ${usd(r.balanceCents)}).`}</p>
<p><a class="back" href="${agentPath(r.agentId)}${paid ? "?done=paid" : ""}#wallet">Back to ${r.agentName}</a></p>`

/** A 303 to a session's return address, as `returnAddress` makes it. */
export const seeReturn = (url: string) =>
  Effect.map(AppConfig, (config) =>
    HttpServerResponse.empty({
      status: 303,
      headers: { location: returnAddress(url, config.baseUrl), "cache-control": "no-store" }
    })
  )
