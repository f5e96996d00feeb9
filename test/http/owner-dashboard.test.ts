// The owner's pages over plain HTTP: signed-out → sign-in page, another account's agent → 404,
// form posts only from the dashboard's own origin (CSRF), bad input → 400 naming the field, the
// owner loosens what a key may only tighten, approve / decline through the services, the polled
// JSON, the chart's figures. The whole flow in a browser: test/http/dashboard.browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseDollars } from "../../src/http/site/owner/request.js"
import { spendChart } from "../../src/http/site/owner/chart.js"
import { usd } from "../../src/http/site/owner/format.js"
import { Effect } from "effect"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { noonUtc, runningClock } from "../fixtures/clock.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

// The server's clock starts at noon UTC of the day the test runs and runs on: the chart's "today"
// cannot turn while the file runs, even when it starts just before midnight.
const start = noonUtc(Date.now())
let server: RuntimeServer
let owner: AgentKey
beforeAll(async () => {
  server = await startRuntimeServer({ clock: runningClock(start) })
  owner = await createAgentKey(server.baseUrl, ["commerce:*"])
})
afterAll(async () => {
  await server?.close()
})

const page = (path: string, cookie = owner.cookie) =>
  fetch(`${server.baseUrl}${path}`, { headers: { cookie }, redirect: "manual" })
const post = (
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = { origin: server.baseUrl },
  cookie = owner.cookie
) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual"
  })
const agentPage = () => `/agent-dashboard/agents/${owner.agentId}`
const buy = (serviceId: string, tierId: string) =>
  fetch(`${server.baseUrl}/api/v1/agent/commerce/buy`, {
    method: "POST",
    headers: { ...owner.auth, "content-type": "application/json" },
    body: JSON.stringify({ serviceId, tierId, input: { text: "hello" } })
  }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as { status: string; approval: { id: string } | null; transaction: { id: string } | null }
  }))
const policy = {
  perTransactionLimit: "",
  dailyLimit: "50",
  monthlyLimit: "",
  approvalThreshold: "10.00",
  autonomyLevel: "semi_auto",
  allowedCategories: "",
  allowedSellers: "",
  autoRechargeThreshold: "0",
  autoRechargeAmount: "10"
}

describe("owner pages", () => {
  it("signed out → the sign-in page; another account's agent → 404; the page has a strict CSP", async () => {
    const out = await page(agentPage(), "")
    expect(out.status).toBe(303)
    expect(out.headers.get("location")).toBe("/agent-dashboard")
    const stranger = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect((await page(agentPage(), stranger.cookie)).status).toBe(404)
    const mine = await page(agentPage())
    expect(mine.status).toBe(200)
    const csp = mine.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    const html = await mine.text()
    expect(html).toContain('id="spend-chart"')
    expect(html).toContain('<script src="/assets/owner.js" defer></script>')
    expect(html).not.toMatch(/<script>|style="/)
    expect((await page(`/agent-dashboard/agents/${owner.agentId}/approvals.json`, "")).status).toBe(401)
  })

  it("forms only from the dashboard's own origin: no Origin, another origin or a cross-site fetch → 403, nothing changed", async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { origin: "https://evil.example" },
      { origin: server.baseUrl, "sec-fetch-site": "cross-site" }
    ]
    for (const headers of attempts) {
      const res = await post(`${agentPage()}/policy`, { ...policy, dailyLimit: "1" }, headers)
      expect(res.status).toBe(403)
      expect(await res.text()).toContain("same origin")
    }
    const wallet = (await (
      await fetch(`${server.baseUrl}/api/v1/agent/commerce/wallet`, { headers: owner.auth })
    ).json()) as { policies: { dailyLimitCents: number | null } }
    expect(wallet.policies.dailyLimitCents).toBeNull()
  })

  it("bad input is 400 naming the field, shown on the page; the owner may loosen what the key may only tighten", async () => {
    const bad = await post(`${agentPage()}/policy`, { ...policy, dailyLimit: "12.345" })
    expect(bad.status).toBe(400)
    // In the owner's words: the field's label, what was typed, and the typed value kept in the form.
    const badPage = await bad.text()
    expect(badPage).toContain("Daily limit: “12.345” is not an amount in dollars")
    expect(badPage).toContain('name="dailyLimit" type="text" inputmode="decimal" value="12.345"')
    const wrongLevel = await post(`${agentPage()}/policy`, { ...policy, autonomyLevel: "reckless" })
    expect(wrongLevel.status).toBe(400)
    expect(await wrongLevel.text()).toContain("autonomyLevel")

    const saved = await post(`${agentPage()}/policy`, policy)
    expect(saved.status).toBe(303)
    expect(saved.headers.get("location")).toBe(`${agentPage()}?done=policy#policy`)
    expect(await (await page(saved.headers.get("location")!)).text()).toContain("Policy saved.")
    // The key may not loosen (existing Wallet rule); the owner's page may.
    const loosen = await fetch(`${server.baseUrl}/api/v1/agent/commerce/wallet`, {
      method: "PATCH",
      headers: { ...owner.auth, "content-type": "application/json" },
      body: JSON.stringify({ dailyLimitCents: 100_000 })
    })
    expect(loosen.status).toBe(403)
    expect((await post(`${agentPage()}/policy`, { ...policy, dailyLimit: "1000" })).status).toBe(303)
    expect((await post(`${agentPage()}/policy`, policy)).status).toBe(303)
  })

  it("top-up answers with the payments layer's checkout; approve and decline run through Commerce; the JSON lists what waits", async () => {
    const top = await post(`${agentPage()}/topup`, { amount: "100" })
    expect(top.status).toBe(303)
    // A path: the checkout opens on the host the owner is on (the fake processor is this server).
    expect(top.headers.get("location")).toMatch(/^\/checkout\/fake\//)
    const checkoutUrl = new URL(top.headers.get("location")!, server.baseUrl).href
    const tooSmall = await post(`${agentPage()}/topup`, { amount: "0.5" })
    expect(tooSmall.status).toBe(400)
    const tooSmallPage = await tooSmall.text()
    expect(tooSmallPage).toContain("Top-up amount: “0.5” is outside $1.00 to $10,000.00")
    expect(tooSmallPage).toContain('name="amount" type="text" inputmode="decimal" required value="0.5"')
    const paid = await fetch(`${checkoutUrl}/pay`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "card=4242424242424242",
      redirect: "manual"
    })
    expect(paid.status).toBe(303)

    const first = await buy("svc_doc_translate", "starter") // 19.00 > the 10.00 threshold
    expect(first.body.status).toBe("pending_approval")
    const second = await buy("svc_doc_translate", "starter")
    const polled = (await (await page(`${agentPage()}/approvals.json`)).json()) as {
      pending: Array<{ id: string; quotedPriceCents: number }>
    }
    expect(polled.pending.map((a) => a.id).sort()).toEqual([first.body.approval!.id, second.body.approval!.id].sort())
    expect(polled.pending[0]!.quotedPriceCents).toBe(1900)

    const approved = await post(`${agentPage()}/approvals/${first.body.approval!.id}/approve`, {})
    expect(approved.status).toBe(303)
    expect(approved.headers.get("location")).toBe(`${agentPage()}?done=approved#transactions`)
    const declined = await post(`${agentPage()}/approvals/${second.body.approval!.id}/decline`, {})
    expect(declined.headers.get("location")).toBe(`${agentPage()}?done=declined#approvals`)
    // Deciding twice is the service's 409, shown on the page.
    const again = await post(`${agentPage()}/approvals/${first.body.approval!.id}/approve`, {})
    expect(again.status).toBe(409)

    const html = await (await page(`${agentPage()}?done=approved`)).text()
    expect(html).toContain("Approved: the purchase ran")
    expect(html).toContain('<dd id="balance">$81.00</dd>')
    const today = new Date(start).toISOString().slice(0, 10)
    expect(html).toContain(`data-day="${today}" data-cents="1900"`)
    expect(html).toContain('class="limit" data-cents="5000"')
    const txId = /transactions\/(tx_[A-Za-z0-9_-]+)"/.exec(html)![1]!
    const detail = await page(`${agentPage()}/transactions/${txId}`)
    expect(detail.status).toBe(200)
    expect(await detail.text()).toContain(first.body.approval!.id)
    // Filters: none refunded; a bad date is 400 naming it.
    expect(await (await page(`${agentPage()}?status=refunded`)).text()).toContain("No transactions match these filters")
    const badFilter = await page(`${agentPage()}?from=yesterday`)
    expect(badFilter.status).toBe(400)
    expect(await badFilter.text()).toContain("from:")
  })

  it("the overview: signed out → sign-in; freeze and unfreeze from it; approving while frozen is refused there and the approval still waits", async () => {
    expect((await page("/agent-dashboard/overview", "")).status).toBe(303)
    expect((await page("/agent-dashboard/overview/live.json", "")).status).toBe(401)
    const stamp = async () =>
      ((await (await page("/agent-dashboard/overview/live.json")).json()) as { stamp: string }).stamp
    const before = await stamp()

    const waiting = await buy("svc_doc_translate", "starter") // over the $10.00 threshold: waits
    expect(waiting.body.status).toBe("pending_approval")
    expect(await stamp()).not.toBe(before) // the open overview redraws
    const overview = await (await page("/agent-dashboard/overview")).text()
    expect(overview).toContain(`data-approval-id="${waiting.body.approval!.id}"`)
    expect(overview).toContain("Document Translation Suite")

    const frozen = await post(`${agentPage()}/freeze`, { frozen: "true", return: "overview" })
    expect(frozen.status).toBe(303)
    expect(frozen.headers.get("location")).toBe("/agent-dashboard/overview?done=frozen#agents")
    expect(await (await page("/agent-dashboard/overview?done=frozen")).text()).toContain("badge-frozen")

    const refused = await post(`${agentPage()}/approvals/${waiting.body.approval!.id}/approve`, { return: "overview" })
    expect(refused.status).toBe(403)
    const refusedPage = await refused.text()
    expect(refusedPage).toContain("<h1>Overview</h1>")
    expect(refusedPage).toMatch(/frozen/i)
    expect(refusedPage).toContain(`data-approval-id="${waiting.body.approval!.id}"`) // still waits

    expect((await post(`${agentPage()}/freeze`, { frozen: "maybe" })).status).toBe(400)
    const unfrozen = await post(`${agentPage()}/freeze`, { frozen: "false" })
    expect(unfrozen.headers.get("location")).toBe(`${agentPage()}?done=unfrozen#wallet`)
    const declined = await post(`${agentPage()}/approvals/${waiting.body.approval!.id}/decline`, { return: "overview" })
    expect(declined.headers.get("location")).toBe("/agent-dashboard/overview?done=declined#inbox")
    // The audit trail on the agent page names the decisions in words.
    const agentHtml = await (await page(agentPage())).text()
    for (const words of ["Agent frozen", "Agent unfrozen", "Purchase declined", "Export the audit trail (CSV)"])
      expect(agentHtml).toContain(words)
  })

  it("the page never echoes the address into itself", async () => {
    const html = await (await page(`${agentPage()}?done=<script>alert(1)</script>`)).text()
    expect(html).not.toContain("<script>alert(1)")
    // Not a key of the notices, even one every object has.
    for (const done of ["constructor", "__proto__", "toString"])
      expect((await page(`${agentPage()}?done=${done}`)).status).toBe(200)
  })
})

describe("owner page pieces", () => {
  it("dollars to cents without floating point", async () => {
    const run = (s: string) => Effect.runPromise(Effect.result(parseDollars("f", s, null)))
    expect(await Effect.runPromise(parseDollars("f", "12.5", null))).toBe(1250)
    expect(await Effect.runPromise(parseDollars("f", "$1,200.07", null))).toBe(120007)
    expect(await Effect.runPromise(parseDollars("f", "", null))).toBeNull()
    for (const bad of ["1.234", "-5", "abc", "1e3"]) expect((await run(bad))._tag).toBe("Failure")
    expect(usd(123456)).toBe("$1,234.56")
    expect(usd(5)).toBe("$0.05")
  })

  it("the chart: 30 bars, the limit line, days over the limit marked", () => {
    const now = Date.UTC(2026, 10, 25, 12)
    const svg = spendChart(
      [
        { day: "2026-11-25", spentCents: 7000 },
        { day: "2026-11-20", spentCents: 1000 }
      ],
      5000,
      now
    ).value
    expect(svg.match(/<rect /g)).toHaveLength(30)
    expect(svg).toContain('class="bar over" data-day="2026-11-25" data-cents="7000"')
    expect(svg).toContain('class="bar" data-day="2026-11-20" data-cents="1000"')
    expect(svg).toContain('data-day="2026-10-27"')
    expect(svg).toContain("exceeded on 1 day")
    expect(spendChart([], null, now).value).toContain("no daily limit")
  })
})
