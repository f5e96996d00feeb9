// The owner's CSV export over HTTP, on every storage: a text/csv attachment with a header row that
// parses back (RFC 4180) to exactly the records the API lists, amounts in cents and in dollars;
// hostile service names (commas, quotes, line breaks, a leading = + - @) come back intact but
// neutralised so a spreadsheet does not run them; a history longer than a page is all there.
import { afterAll, beforeAll, expect, it } from "vitest"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer

const call = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(init.method && init.method !== "GET" ? { "idempotency-key": crypto.randomUUID() } : {}),
      ...init.headers
    },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/** An RFC 4180 reader written independently of the server's writer: rows of fields. */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let field = ""
  let fields: Array<string> = []
  let i = 0
  let quoted = false
  while (i < text.length) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"'
        i += 2
        continue
      }
      if (ch === '"') quoted = false
      else field += ch
      i++
      continue
    }
    if (ch === '"' && field === "") quoted = true
    else if (ch === ",") {
      fields.push(field)
      field = ""
    } else if (ch === "\r" && text[i + 1] === "\n") {
      fields.push(field)
      rows.push(fields)
      fields = []
      field = ""
      i++
    } else field += ch
    i++
  }
  if (field !== "" || fields.length > 0) throw new Error("the last row has no CRLF")
  return rows
}

const exportCsv = async (k: AgentKey, kind: string) => {
  const res = await fetch(`${server.baseUrl}/api/dashboard/agents/${k.agentId}/export.csv?kind=${kind}`, {
    headers: { cookie: k.cookie }
  })
  const text = await res.text()
  const [header, ...rows] = parseCsv(text)
  return { res, text, records: rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]]))), header }
}

const HOSTILE = [
  '=HYPERLINK("http://evil.example","click")',
  "+1+1",
  "-2+3",
  "@SUM(A1:A2)",
  'Comma, "quotes" and\nline breaks',
  "plain name"
]

describeEachStorage("CSV export over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("transactions: a text/csv attachment that round-trips, hostile names neutralised, cents and dollars", async () => {
    const seller = await createAgentKey(server.baseUrl, ["commerce:*"])
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    await call(`/api/dashboard/commerce/wallets/${buyer.agentId}`, {
      method: "PATCH",
      headers: { cookie: buyer.cookie },
      body: {
        autonomyLevel: "full_auto",
        approvalThresholdCents: 1_000_000,
        perTransactionLimitCents: null,
        dailyLimitCents: null,
        monthlyLimitCents: null
      }
    })
    expect(
      (
        await call("/api/v1/agent/commerce/wallet/topup", {
          method: "POST",
          headers: buyer.auth,
          body: { amountCents: 100_000 }
        })
      ).status
    ).toBe(201)
    for (const [n, name] of HOSTILE.entries()) {
      const published = await call("/api/v1/agent/commerce/services", {
        method: "POST",
        headers: seller.auth,
        body: {
          name,
          description: "a service with a name a spreadsheet might run",
          category: "testing",
          pricingModel: "per_call",
          tiers: [
            {
              id: "one",
              name: "one",
              priceCents: 1_234 + n,
              unit: "call",
              includedUnits: null,
              sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
            }
          ]
        }
      })
      expect(published.status).toBe(201)
      const bought = await call("/api/v1/agent/commerce/buy", {
        method: "POST",
        headers: buyer.auth,
        body: { serviceId: published.body.id, tierId: "one", input: { n } }
      })
      // An agent's service is fulfilled by its seller (pull): the buy waits (202), the seller delivers.
      expect(bought.status).toBe(202)
      const delivered = await call(`/api/v1/agent/commerce/orders/${bought.body.transaction.id}/deliver`, {
        method: "POST",
        headers: seller.auth,
        body: { output: { n } }
      })
      expect(delivered.status).toBe(200)
    }

    const { res, records, header } = await exportCsv(buyer, "transactions")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${buyer.agentId}-transactions.csv"`)
    expect(header).toContain("price_dollars")
    const listed = (await call(`/api/v1/agent/commerce/transactions?limit=100`, { headers: buyer.auth })).body.data
    expect(records.map((r) => r.transaction_id)).toEqual(listed.map((t: { id: string }) => t.id))
    for (const [i, t] of listed.entries()) {
      const r = records[i]
      expect(Number(r.price_cents)).toBe(t.priceCents)
      expect(r.price_dollars).toBe((t.priceCents / 100).toFixed(2))
      expect(Number(r.fee_cents) + Number(r.seller_cents)).toBe(t.priceCents)
      // A name a spreadsheet would run as a formula is prefixed with an apostrophe; others are as given.
      expect(r.service_name).toBe(/^[=+\-@]/.test(t.serviceName) ? `'${t.serviceName}` : t.serviceName)
    }
    expect(new Set(records.map((r) => r.service_name.replace(/^'/, "")))).toEqual(new Set(HOSTILE))
  })

  it("audit: every entry of a history longer than an export page, newest first, with who made it", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    for (let i = 1; i <= 105; i++) {
      const res = await call(`/api/dashboard/commerce/wallets/${k.agentId}`, {
        method: "PATCH",
        headers: { cookie: k.cookie },
        body: { approvalThresholdCents: i }
      })
      expect(res.status).toBe(200)
    }
    const { res, records } = await exportCsv(k, "audit")
    expect(res.status).toBe(200)
    // Exactly the entries the API pages list (the agent's creation may have set its first limits too).
    const listed: Array<{ id: string }> = []
    for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
      const page = await call(`/api/dashboard/agents/${k.agentId}/audit${cursor ? `?cursor=${cursor}` : ""}`, {
        headers: { cookie: k.cookie }
      })
      listed.push(...page.body.entries)
      cursor = page.body.nextCursor
    }
    expect(records.map((r) => r.entry_id)).toEqual(listed.map((e) => e.id))
    expect(records.slice(0, 105).map((r) => JSON.parse(r.after).approvalThresholdCents)).toEqual(
      Array.from({ length: 105 }, (_, i) => 105 - i)
    )
    expect(records[0]).toMatchObject({ action: "policy.changed", actor_kind: "owner", actor_id: k.accountId })
    const empty = await createAgentKey(server.baseUrl, ["commerce:read"])
    const none = await exportCsv(empty, "audit")
    const emptyTrail = await call(`/api/dashboard/agents/${empty.agentId}/audit`, { headers: { cookie: empty.cookie } })
    expect(none.records.map((r) => r.entry_id)).toEqual(emptyTrail.body.entries.map((e: { id: string }) => e.id))
    expect(none.text.startsWith("created_at,entry_id,action")).toBe(true)
  })
})
