// End to end: GET /api/discover (every §2.1 member and field, numbers agreeing with the live
// endpoints, lists generated from the route and procedure tables, every listed address answering),
// ETag/304 and cache headers, visitor classification, and the agent files (llms.txt, robots.txt,
// sitemap.xml, ai-plugin.json, mcp.json, mcp-tools.json, agent-card.json, /invest/api, /).
import { Result, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../src/http/api.js"
import { routeTable } from "../../src/http/routeTable.js"
import { procedures } from "../../src/http/procedures.js"
import { mcpRoutes } from "../../src/http/descriptors/mcp.js"
import { DiscoveryDocument } from "../../src/services/discovery/document.js"
import { createAgentKey, signUp, type AgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import type { JsonSchema } from "../fixtures/openapiDocument.js"

/** The document as served (JSON): the schema's encoded side, which the first test decodes it against. */
type Doc = typeof DiscoveryDocument.Encoded
/** An error answer: the REST envelope, or the procedure adapter's. */
interface ErrorBody {
  readonly type?: string
  readonly resource?: string
  readonly error?: { readonly message?: string; readonly data?: { readonly type?: string } }
}
/** A line of mcp-tools.json (and of mcp.json's tools). */
interface McpTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly annotations: { readonly readOnlyHint: boolean }
  readonly _meta: { readonly method: string; readonly path: string; readonly permission: string | null }
}

let server: TestServer
/** Before the server started: no document can have been generated earlier. */
let startedAt = 0
let base: string
let key: AgentKey
let me: { agent: { name: string; organization: string | null } }

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers })
const discover = async (headers: Record<string, string> = {}) => {
  const res = await get("/api/discover", headers)
  expect(res.status).toBe(200)
  return { res, doc: (await res.json()) as Doc }
}

beforeAll(async () => {
  startedAt = Date.now()
  server = await startServer({ config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  base = server.baseUrl
  key = await createAgentKey(base, [
    "catalog:read",
    "evaluate",
    "acquire",
    "invest",
    "create",
    "commerce:*",
    "webhooks:manage"
  ])
  me = (await (await get("/api/v1/agent/me", key.auth)).json()) as typeof me
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const routes = routeTable(Api)
const TOP_LEVEL = [
  "platform",
  "visitor",
  "capabilities",
  "api_endpoints",
  "integrations",
  "for_ai_agents",
  "ai_commerce",
  "market_data",
  "legal",
  "_meta"
]

describe("GET /api/discover: members and fields (spec §2.1)", () => {
  it("has the ten top-level members, in order, and decodes with the document schema (§2.1 plus mcp_endpoint)", async () => {
    const { doc } = await discover()
    expect(Object.keys(doc)).toEqual(TOP_LEVEL)
    const decoded = Schema.decodeUnknownResult(DiscoveryDocument, { onExcessProperty: "error" })(doc)
    if (Result.isFailure(decoded)) throw new Error(String(decoded.failure))
  })

  it("platform, capabilities, integrations, legal and _meta carry the stated values and types", async () => {
    const { doc } = await discover()
    expect(doc.platform).toMatchObject({ url: base, version: "1.0.0" })
    for (const f of ["name", "tagline", "founder", "organization"] as const)
      expect(typeof doc.platform[f]).toBe("string")
    expect(doc.platform.languages).toEqual(["pt", "en", "es", "zh-CN", "ja", "ko", "fr", "de", "it"])

    const c = doc.capabilities
    expect(typeof c.voice_builder.status).toBe("string")
    expect(typeof c.voice_builder.description).toBe("string")
    expect(c.voice_builder.supported_inputs).toEqual(["voice", "text", "pdf", "image", "csv"])
    expect(c.voice_builder.ai_models.length).toBeGreaterThan(0)
    expect(Number.isInteger(c.marketplace.total_templates)).toBe(true)
    expect(c.monetization.revenue_share).toEqual({ creator: "85%", platform: "15%" })
    expect(typeof c.monetization.payment_processor).toBe("string")
    expect(c.investment).toMatchObject({
      status: "active",
      token: "Agent Commerce Utility Token",
      token_symbol: "ACT",
      token_type: "utility",
      stake_available: "49%",
      governance: "top 10 investors + founder veto",
      ai_agent_investment: true,
      api_endpoint: `${base}/invest/api`
    })
    expect(c.investment.valuation).toMatch(/^USD 10,000,000 /)
    expect(c.investment.valuation).toContain("estimate")
    expect(c.security).toEqual({
      encryption: "AES-256",
      transport: "TLS 1.3",
      model: "zero-trust",
      compliance: ["GDPR", "LGPD", "CCPA", "PIPA", "APPI"]
    })

    // Only what this process runs: the tests' fake processor, never a sign-in provider or chat integration it lacks.
    expect(doc.integrations.active).toEqual(
      expect.arrayContaining(["Test payments (fake processor, no money moves)", "MCP tools", "Webhooks"])
    )
    expect(JSON.stringify(doc.integrations)).not.toMatch(/OpenID|Slack|Zapier|"Stripe"/)
    expect(doc.integrations.available).toEqual([])
    for (const f of ["active", "available", "coming_soon"] as const)
      expect(Array.isArray(doc.integrations[f])).toBe(true)
    expect(doc.integrations.custom_mcp).toBe(true)
    expect(doc.integrations.details_url).toBe(`${base}/integrations`)

    expect(doc.legal).toMatchObject({
      jurisdiction: ["Brazil", "Paraguay"],
      token_classification: "utility token — not a security",
      terms_url: `${base}/terms`,
      whitepaper_url: `${base}/whitepaper`,
      legal_guide_url: `${base}/legal-guide`
    })
    expect(doc.legal.disclaimer).toContain("projections are estimates, not investment advice")

    for (const f of ["global_ai_market_2033", "cagr", "gross_margin", "break_even"] as const)
      expect(typeof doc.market_data[f]).toBe("string")
    expect(Object.keys(doc.market_data.revenue_projection)).toEqual(["year_1", "year_2", "year_3", "year_5"])
    for (const v of Object.values(doc.market_data.revenue_projection)) expect(v).toMatch(/projection/)
    expect(JSON.stringify(doc.market_data)).toMatch(/estimate/)

    expect(doc._meta.cache_ttl).toBe(3600)
    expect(doc._meta.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
    // Generated by this server, at or before this read: between its start and now, whatever the machine's speed.
    expect(Date.parse(doc._meta.generated_at)).toBeGreaterThanOrEqual(startedAt - (startedAt % 1000))
    expect(Date.parse(doc._meta.generated_at)).toBeLessThanOrEqual(Date.now())
    expect(typeof doc._meta.format).toBe("string")
    expect(typeof doc._meta.purpose).toBe("string")
  })

  it("for_ai_agents and ai_commerce carry the stated addresses and enumerations", async () => {
    const { doc } = await discover()
    const f = doc.for_ai_agents
    expect(f).toMatchObject({
      dedicated_page: `${base}/for-ai-agents`,
      agent_dashboard: `${base}/agent-dashboard`,
      llms_txt: `${base}/llms.txt`,
      plugin_manifest: `${base}/.well-known/ai-plugin.json`,
      mcp_manifest: `${base}/.well-known/mcp.json`,
      mcp_endpoint: `${base}/mcp`,
      openapi_spec: `${base}/api/v1/agent/openapi.json`,
      mcp_tools: `${base}/api/v1/agent/mcp-tools.json`
    })
    expect(f.agent_api_v1).toMatchObject({
      base_url: `${base}/api/v1/agent`,
      permissions: ["catalog:read", "evaluate", "acquire", "invest", "create"]
    })
    expect(f.agent_api_v1.auth).toContain("Bearer")
    expect(f.use_cases.length).toBeGreaterThan(0)

    const a = doc.ai_commerce
    const cb = `${base}/api/v1/agent/commerce`
    expect(a).toMatchObject({
      protocol: "AI2AIC",
      version: "1.0.0",
      base_url: cb,
      auth: "Bearer API key with commerce:* permissions",
      permissions: ["commerce:read", "commerce:buy", "commerce:sell", "commerce:negotiate"],
      autonomy_levels: ["manual", "semi_auto", "full_auto"],
      pricing_models: ["per_call", "monthly", "usage_based", "tiered"],
      settlement: "instant: 85% seller, 15% platform fee",
      mpp: {
        status: "pending_early_access",
        methods: ["crypto.charge", "card.charge"],
        min_charge_usd: "0.01",
        protocol: "HTTP 402",
        fallback: "internal_credits",
        discovery_url: `${cb}/mpp`,
        health_url: `${cb}/mpp/health`
      }
    })
    expect(a.quick_start).toMatchObject({
      autonomous_purchase_url: `${cb}/buy`,
      saga_url: `${cb}/saga`,
      wallet_url: `${cb}/wallet`,
      negotiate_url: `${cb}/negotiate`
    })
    for (const k of ["how_to_buy", "how_to_negotiate"] as const) expect(typeof a.quick_start[k]).toBe("string")
    for (const k of ["reputation", "leaderboard", "reviews", "sla_monitoring"] as const)
      expect(typeof a.trust_system[k]).toBe("string")
    expect(a.capabilities.length).toBeGreaterThan(0)
  })

  it("every address is absolute, built from BASE_URL", async () => {
    const { doc } = await discover()
    const addresses: Array<string> = []
    const walk = (v: unknown, key: string) => {
      if (typeof v === "string") {
        if (
          /(^url$|_url$|^api_endpoint$|^dedicated_page$|^agent_dashboard$|^llms_txt$|_manifest$|^mcp_endpoint$|^openapi_spec$|^mcp_tools$|^agent_card$)/.test(
            key
          )
        )
          addresses.push(v)
      } else if (Array.isArray(v)) v.forEach((x) => walk(x, key))
      else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k)
    }
    walk(doc, "")
    expect(addresses.length).toBeGreaterThan(40)
    for (const a of addresses) expect(a.startsWith(`${base}/`) || a === base, a).toBe(true)
  })
})

describe("GET /api/discover: numbers agree with the live endpoints", () => {
  it("templates and categories are marketplace.getTemplates; plans are subscription.getPlans", async () => {
    const { doc } = await discover()
    const templates = (
      (await (await get("/api/trpc/marketplace.getTemplates")).json()) as {
        result: { data: Array<{ category: string }> }
      }
    ).result.data
    const plans = ((await (await get("/api/trpc/subscription.getPlans")).json()) as { result: { data: unknown } })
      .result.data
    const m = doc.capabilities.marketplace
    expect(m.total_templates).toBe(templates.length)
    expect(m.total_templates).toBe(16)
    expect(m.templates).toEqual(templates)
    expect([...m.categories].sort()).toEqual([...new Set(templates.map((t) => t.category))].sort())
    expect(m.categories).toHaveLength(8)
    expect(doc.capabilities.monetization.plans).toEqual(plans)
    expect(doc.capabilities.monetization.plans.map((p) => p.name)).toEqual(["Starter", "Pro", "Scale"])
  })

  it("the rate limit is the configured one", async () => {
    const { doc } = await discover()
    expect(doc.for_ai_agents.agent_api_v1.rate_limit).toBe("100000/minute, 1000000/day per key")
  })

  it("/for-ai-agents states the configured rate limit too, in English and Portuguese", async () => {
    const page = async (lang: string) =>
      (await (await get(`/for-ai-agents?lang=${lang}`)).text()).replace(/<[^>]+>/g, "").replace(/\s+/g, " ")
    const en = await page("en")
    expect(en).toContain("100,000 requests per minute and 1,000,000 requests per day per key")
    expect(en).not.toContain("60 requests per minute")
    const pt = await page("pt")
    expect(pt).toContain("100.000 requisições por minuto e 1.000.000 requisições por dia por chave")
    expect(pt).not.toContain("60 requisições por minuto")
  })
})

describe("GET /api/discover: endpoint lists are generated from the route and procedure tables", () => {
  it("every HttpApi route and every procedure is listed once, public or authenticated by its auth", async () => {
    const { doc } = await discover()
    const listed = [...doc.api_endpoints.public, ...doc.api_endpoints.authenticated]
    const keyOf = (m: string, p: string) => `${m} ${p}`
    const all = listed.map((l) => keyOf(l.method, l.path))
    expect(new Set(all).size).toBe(all.length)
    for (const r of routes) {
      const line = listed.find((l) => l.method === r.method && l.path === r.path)
      expect(line, `${r.method} ${r.path}`).toBeDefined()
      expect(line!.description).toBe(r.summary)
      expect(doc.api_endpoints[r.auth === "public" ? "public" : "authenticated"]).toContainEqual(line)
    }
    for (const [name, p] of Object.entries(procedures)) {
      const line = listed.find((l) => l.path === `/api/trpc/${name}`)
      expect(line, name).toMatchObject({ method: p.type === "query" ? "GET" : "POST", description: p.description })
      expect(line!.auth).toBe(p.access._tag === "public" ? "public" : "bearer_or_session")
    }
    for (const l of listed) {
      expect(l.url).toBe(`${base}${l.path}`)
      expect(typeof l.description).toBe("string")
    }
    for (const p of [
      "/api/discover",
      "/llms.txt",
      "/robots.txt",
      "/sitemap.xml",
      "/api/trpc/marketplace.getTemplates",
      "/api/trpc/subscription.getPlans"
    ]) {
      expect(doc.api_endpoints.public.map((l) => l.path)).toContain(p)
    }
    for (const p of ["/api/trpc/invest.invest", "/api/trpc/invest.vote", "/api/trpc/portfolio.holdings"]) {
      expect(doc.api_endpoints.authenticated.map((l) => l.path)).toContain(p)
    }
  })

  it("the MCP endpoint: for_ai_agents.mcp_endpoint is the manifest's endpoint; POST /mcp is listed as authenticated, from the registered route", async () => {
    const { doc } = await discover()
    const manifest = (await (await get("/.well-known/mcp.json")).json()) as {
      endpoint: string
      transport: { url: string }
    }
    expect(doc.for_ai_agents.mcp_endpoint).toBe(`${base}/mcp`)
    expect(doc.for_ai_agents.mcp_endpoint).toBe(manifest.endpoint)
    expect(doc.for_ai_agents.mcp_endpoint).toBe(manifest.transport.url)

    expect(mcpRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /mcp"])
    for (const r of mcpRoutes) {
      expect(doc.api_endpoints.authenticated).toContainEqual({
        method: r.method,
        path: r.path,
        description: r.description,
        url: `${base}${r.path}`,
        auth: "bearer",
        permission: null
      })
    }
    // Only POST carries messages; GET and DELETE answer 405 and are not listed.
    const mcpLines = [...doc.api_endpoints.public, ...doc.api_endpoints.authenticated].filter((l) => l.path === "/mcp")
    expect(mcpLines.map((l) => l.method)).toEqual(["POST"])

    // The listed line is the live route: without a key 401, with one a JSON-RPC answer.
    const unauth = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}"
    })
    expect(unauth.status).toBe(401)
    const ping = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { ...key.auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
      })
    })
    expect(ping.status).toBe(200)
    expect(((await ping.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe(
      "agent-commerce"
    )
  })

  it("agent_api_v1.endpoints are the key routes under /api/v1/agent but not /commerce; ai_commerce.endpoints those under /commerce", async () => {
    const { doc } = await discover()
    const agent = routes.filter(
      (r) => r.auth !== "public" && r.path.startsWith("/api/v1/agent/") && !r.path.startsWith("/api/v1/agent/commerce/")
    )
    const commerce = routes.filter((r) => r.path.startsWith("/api/v1/agent/commerce/"))
    const ab = doc.for_ai_agents.agent_api_v1.base_url
    const cb = doc.ai_commerce.base_url
    expect(doc.for_ai_agents.agent_api_v1.endpoints.map((e) => `${e.method} ${ab}${e.path}`).sort()).toEqual(
      agent.map((r) => `${r.method} ${base}${r.path}`).sort()
    )
    expect(doc.ai_commerce.endpoints.map((e) => `${e.method} ${cb}${e.path}`).sort()).toEqual(
      commerce.map((r) => `${r.method} ${base}${r.path}`).sort()
    )
    for (const e of [...doc.for_ai_agents.agent_api_v1.endpoints, ...doc.ai_commerce.endpoints]) {
      expect(Object.keys(e)).toEqual(expect.arrayContaining(["method", "path", "desc"]))
      expect(e.desc.length).toBeGreaterThan(0)
    }
    expect(agent.length).toBeGreaterThan(5)
  })
})

// ---------------------------------------------------------------------------
// Walking every listed address
// ---------------------------------------------------------------------------

/** The address with every `:param` of its path replaced by a dummy id (the origin's port untouched). */
const concrete = (url: string) => {
  const u = new URL(url)
  return `${u.origin}${u.pathname.replace(/:(\w+)/g, (_, name: string) => `${name}_dummy0000`)}${u.search}`
}
const hasBody = (method: string) => method !== "GET" && method !== "DELETE" && method !== "HEAD"

const call = async (method: string, url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(concrete(url), {
    method,
    headers: { ...headers, ...(hasBody(method) ? { "content-type": "application/json" } : {}) },
    ...(hasBody(method) ? { body: "{}" } : {}),
    redirect: "manual"
  })
  const text = await res.text()
  let body: ErrorBody | undefined
  try {
    body = JSON.parse(text) as ErrorBody
  } catch {
    body = undefined
  }
  return { status: res.status, body, text }
}

/** A 404 that says "no such route" (the global 404, or the procedure adapter's unknown path) — not a missing object. */
const routeMissing = (r: { status: number; body: ErrorBody | undefined }) =>
  r.status === 404 && (r.body?.resource === "route" || /No procedure found/.test(String(r.body?.error?.message ?? "")))

interface Listed {
  readonly method: string
  readonly url: string
  readonly auth: string
}

const listedEndpoints = (doc: Doc): Array<Listed> => {
  const auth = new Map<string, string>()
  for (const l of [...doc.api_endpoints.public, ...doc.api_endpoints.authenticated])
    auth.set(`${l.method} ${l.url}`, l.auth)
  const out: Array<Listed> = []
  for (const l of [...doc.api_endpoints.public, ...doc.api_endpoints.authenticated])
    out.push({ method: l.method, url: l.url, auth: l.auth })
  for (const [lineBase, lines] of [
    [doc.for_ai_agents.agent_api_v1.base_url, doc.for_ai_agents.agent_api_v1.endpoints],
    [doc.ai_commerce.base_url, doc.ai_commerce.endpoints]
  ] as const) {
    for (const l of lines) {
      const url = `${lineBase}${l.path}`
      expect(l.url).toBe(url)
      out.push({ method: l.method, url, auth: auth.get(`${l.method} ${url}`) ?? "bearer" })
    }
  }
  return out
}

/** Every absolute address anywhere in the document (inside prose too), trailing punctuation removed. */
const allAddresses = (doc: Doc): Set<string> => {
  const found = new Set<string>()
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      for (const m of v.matchAll(/https?:\/\/[^\s"'<>()]+/g)) found.add(m[0].replace(/[.,;:]+$/, ""))
    } else if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === "object") Object.values(v).forEach(walk)
  }
  walk(doc)
  return found
}

/**
 * What keeps an XML body (its prolog removed) from being well-formed: a token that is not a tag, a
 * closing tag that does not close the innermost open one, an unclosed tag, an entity other than the
 * predefined ones, text outside the root element, other than one root element.
 */
const xmlProblems = (body: string): Array<string> => {
  const problems: Array<string> = []
  const stack: Array<string> = []
  let rootSeen = 0
  for (const m of body.matchAll(/<[^>]*>|[^<]+/g)) {
    const token = m[0]
    if (token.startsWith("<")) {
      const tag = /^<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>$/.exec(token)
      if (tag === null) {
        problems.push(`not a tag: ${token}`)
        continue
      }
      const [, close, name, , selfClose] = tag
      if (close) {
        const open = stack.pop()
        if (open !== name) problems.push(`${token} closes ${open ?? "nothing"}`)
      } else if (!selfClose) {
        if (stack.length === 0) rootSeen++
        stack.push(name)
      }
    } else {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(token)) problems.push(`an entity that is not predefined: ${token}`)
      if (stack.length === 0 && token.trim() !== "") problems.push(`text outside the root element: ${token}`)
    }
  }
  if (stack.length > 0) problems.push(`unclosed: ${stack.join(", ")}`)
  if (rootSeen !== 1) problems.push(`${rootSeen} root elements`)
  return problems
}

describe("every address /api/discover lists answers", () => {
  it("without credentials: public ones answer (non-404), key and session ones 401", async () => {
    const { doc } = await discover()
    const endpoints = listedEndpoints(doc)
    expect(endpoints.length).toBeGreaterThan(40)
    for (const e of endpoints) {
      const r = await call(e.method, e.url)
      const label = `${e.method} ${e.url} → ${r.status} ${r.text.slice(0, 200)}`
      expect(routeMissing(r), label).toBe(false)
      // Procedures authorize before they decode input, like REST: no credentials is always 401.
      expect(r.status === 401, label).toBe(e.auth !== "public")
    }
  }, 120_000)

  it("with credentials: key routes accept the key, session routes the session; a 404 is only ever a missing object", async () => {
    const { doc } = await discover()
    for (const e of listedEndpoints(doc)) {
      // Session routes get a fresh owner each, so signing out cannot spoil the next call.
      const headers: Record<string, string> =
        e.auth === "session" ? { cookie: (await signUp(base)).cookie } : e.auth === "public" ? {} : { ...key.auth }
      const r = await call(e.method, e.url, headers)
      const label = `${e.method} ${e.url} → ${r.status} ${r.text.slice(0, 200)}`
      expect(routeMissing(r), label).toBe(false)
      expect(r.status, label).not.toBe(401)
      expect(e.auth === "bearer" && r.status === 403, `a key route refuses the key: ${label}`).toBe(false)
      // A 404 here is a typed "no such object" from the route's own handler.
      expect(
        r.status !== 404 || (r.body?.type ?? r.body?.error?.data?.type) === "NotFound",
        `a 404 that is not NotFound: ${label}`
      ).toBe(true)
      expect(r.status, label).toBeLessThan(500)
    }
  }, 120_000)

  it("every other address in the document (for_ai_agents, quick_start, mpp, legal, prose) answers", async () => {
    const { doc } = await discover()
    const endpoints = listedEndpoints(doc)
    const templates = new Set(endpoints.map((e) => e.url))
    // Base URLs are prefixes, not addresses of their own.
    const prefixes = new Set([doc.for_ai_agents.agent_api_v1.base_url, doc.ai_commerce.base_url])
    const pending: Array<string> = []
    for (const address of allAddresses(doc)) {
      expect(address.startsWith(base), address).toBe(true)
      if (templates.has(address) || prefixes.has(address)) continue // walked above with its own method, or a prefix
      const r = await call("GET", address, key.auth)
      expect(routeMissing(r) || r.status < 500, `${address} → ${r.status}`).toBe(true)
      if (!routeMissing(r)) continue
      // GET has no route: the address must be a listed endpoint's (with another method) …
      if (endpoints.some((e) => e.url === address)) continue
      // … or a commerce address whose route has not landed in the route table yet (issues 5/6).
      const path = address.slice(base.length)
      const registered = routes.some((rt) => rt.path === path)
      if (path.startsWith("/api/v1/agent/commerce/") && !registered) {
        pending.push(path)
        continue
      }
      throw new Error(`${address} is listed by /api/discover but no route answers it`)
    }
    if (pending.length > 0) console.warn(`[discovery] commerce addresses not registered yet: ${pending.join(", ")}`)
    for (const f of [
      "dedicated_page",
      "agent_dashboard",
      "llms_txt",
      "plugin_manifest",
      "mcp_manifest",
      "openapi_spec",
      "mcp_tools",
      "agent_card"
    ] as const) {
      const res = await get(doc.for_ai_agents[f].slice(base.length))
      expect(res.status, f).toBe(200)
    }
  }, 120_000)
})

// ---------------------------------------------------------------------------
// Caching and visitor classification
// ---------------------------------------------------------------------------

describe("GET /api/discover: caching", () => {
  it("sends Cache-Control public max-age=3600, an ETag, and answers If-None-Match with 304", async () => {
    const headers = { "user-agent": "ClaudeBot/1.0" }
    const { res, doc } = await discover(headers)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600")
    expect(res.headers.get("vary")).toMatch(/Authorization/)
    expect(res.headers.get("vary")).toMatch(/User-Agent/)
    const etag = res.headers.get("etag")!
    expect(etag).toMatch(/^"[^"]+"$/)

    const second = await get("/api/discover", { ...headers, "if-none-match": etag })
    expect(second.status).toBe(304)
    expect(second.headers.get("etag")).toBe(etag)
    expect(second.headers.get("cache-control")).toBe("public, max-age=3600")
    expect(await second.text()).toBe("")

    for (const variant of [`W/${etag}`, `"nope", ${etag}`, "*"]) {
      expect((await get("/api/discover", { ...headers, "if-none-match": variant })).status, variant).toBe(304)
    }
    const stale = await get("/api/discover", { ...headers, "if-none-match": '"something-else"' })
    expect(stale.status).toBe(200)

    // The cached document is reused: same generated_at and ETag on the next request.
    const again = await discover(headers)
    expect(again.res.headers.get("etag")).toBe(etag)
    expect(again.doc._meta.generated_at).toBe(doc._meta.generated_at)
  })

  it("a different visitor gets a different body and ETag from the same build", async () => {
    const a = await discover({ "user-agent": "curl/8.5.0" })
    const b = await discover({
      "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    })
    expect(a.res.headers.get("etag")).not.toBe(b.res.headers.get("etag"))
    expect(a.doc._meta.generated_at).toBe(b.doc._meta.generated_at)
    expect(a.doc.visitor.classified_as).toBe("ai_agent")
    expect(b.doc.visitor.classified_as).toBe("crawler")
  })

  it("a response personalised by a key is private, and still has an ETag that 304s", async () => {
    const { res } = await discover(key.auth)
    expect(res.headers.get("cache-control")).toBe("private, max-age=3600")
    const etag = res.headers.get("etag")!
    expect((await get("/api/discover", { ...key.auth, "if-none-match": etag })).status).toBe(304)
  })
})

describe("GET /api/discover: visitor classification", () => {
  it("a valid bearer key → ai_agent named after the key's agent and organization, without spending rate limit", async () => {
    const used = async () => {
      const body = (await (await get("/api/v1/agent/me", key.auth)).json()) as {
        rateLimit: Array<{ name: string; used: number }>
      }
      return body.rateLimit.find((w) => w.name === "minute")?.used ?? body.rateLimit[0].used
    }
    const before = await used()
    for (let i = 0; i < 3; i++) {
      const { doc } = await discover({
        ...key.auth,
        "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
      })
      expect(doc.visitor).toMatchObject({
        classified_as: "ai_agent",
        agent_name: me.agent.name,
        organization: "Test Org",
        authenticated: true,
        detected_by: "api_key"
      })
      expect(doc.visitor.message).toContain(me.agent.name)
    }
    // /me itself spends one request; the three discover calls spend none.
    expect(await used()).toBe(before + 1)
  })

  it("an invalid key is not an error: classified by User-Agent, response private", async () => {
    const { res, doc } = await discover({
      authorization: "Bearer ak_live_not-a-real-key",
      "user-agent": "python-requests/2.32.3"
    })
    expect(res.headers.get("cache-control")).toBe("private, max-age=3600")
    expect(doc.visitor).toMatchObject({
      classified_as: "ai_agent",
      agent_name: "python-requests",
      authenticated: false,
      detected_by: "user_agent"
    })
    expect(doc.visitor.message).toMatch(/not accepted/)
  })

  it.each([
    [
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)",
      "ai_agent",
      "GPTBot",
      "OpenAI"
    ],
    ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "crawler", "bingbot", "Microsoft"],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36",
      "browser",
      null,
      null
    ],
    ["Totally/Unknown", "unknown", null, null]
  ])("User-Agent %s → %s", async (ua, kind, name, org) => {
    const { doc } = await discover({ "user-agent": ua })
    expect(doc.visitor).toMatchObject({
      classified_as: kind,
      agent_name: name,
      organization: org,
      authenticated: false
    })
    expect(doc.visitor.message.length).toBeGreaterThan(0)
  })
})

// ---------------------------------------------------------------------------
// The agent files
// ---------------------------------------------------------------------------

describe("agent files", () => {
  it.each([
    ["/api/discover", /^application\/json/],
    ["/llms.txt", /^text\/plain; charset=utf-8/],
    ["/robots.txt", /^text\/plain; charset=utf-8/],
    ["/sitemap.xml", /^application\/xml/],
    ["/.well-known/ai-plugin.json", /^application\/json/],
    ["/.well-known/mcp.json", /^application\/json/],
    ["/.well-known/agent-card.json", /^application\/json/],
    ["/api/v1/agent/mcp-tools.json", /^application\/json/],
    ["/", /^text\/html; charset=utf-8/],
    ["/assets/logo.svg", /^image\/svg\+xml/]
  ])("%s has content type %s, an ETag and a 304", async (path, type) => {
    const res = await get(path)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(type)
    const etag = res.headers.get("etag")
    expect(etag).toMatch(/^"[^"]+"$/)
    expect((await get(path, { "if-none-match": etag! })).status).toBe(304)
  })

  it("/invest/api has content type application/json", async () => {
    const res = await get("/invest/api")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  })

  it("llms.txt follows the llmstxt.org layout: H1, > summary, ## sections of markdown links", async () => {
    const text = await (await get("/llms.txt")).text()
    const lines = text.split("\n")
    expect(lines[0]).toBe("# Agent Commerce")
    expect(lines.filter((l) => /^# /.test(l))).toHaveLength(1)
    const firstContent = lines.slice(1).find((l) => l.trim() !== "")
    expect(firstContent).toMatch(/^> \S/)
    const sections = lines.filter((l) => l.startsWith("## ")).map((l) => l.slice(3))
    expect(sections).toEqual(
      expect.arrayContaining(["Docs", "Agent API v1", "AI2AIC commerce protocol", "Agent files", "Optional"])
    )
    expect(sections[sections.length - 1]).toBe("Optional")
    // After the first section, every non-blank line is a link list item with an absolute address.
    const firstSection = lines.findIndex((l) => l.startsWith("## "))
    const links: Array<string> = []
    for (const l of lines.slice(firstSection)) {
      if (l.trim() === "" || l.startsWith("## ")) continue
      const m = /^- \[([^\]]+)\]\(([^)\s]+)\)(: .+)?$/.exec(l)
      expect(m, l).not.toBeNull()
      expect(m![2].startsWith(`${base}/`), l).toBe(true)
      links.push(m![2])
    }
    for (const r of routes.filter((r) => r.path.startsWith("/api/v1/agent/") && r.auth === "key"))
      expect(links).toContain(`${base}${r.path}`)
    for (const p of ["/docs", "/api/v1/agent/openapi.json", "/for-ai-agents", "/api/discover"])
      expect(links).toContain(`${base}${p}`)
  })

  it("robots.txt allows the public and agent paths, disallows the dashboard API, and names the sitemap", async () => {
    const text = await (await get("/robots.txt")).text()
    const lines = text.split("\n")
    expect(lines).toContain("User-agent: *")
    for (const p of [
      "/",
      "/api/discover",
      "/llms.txt",
      "/.well-known/",
      "/api/v1/agent/openapi.json",
      "/api/v1/agent/mcp-tools.json",
      "/for-ai-agents",
      "/invest/api"
    ]) {
      expect(lines, p).toContain(`Allow: ${p}`)
    }
    expect(lines).toContain("Disallow: /api/dashboard")
    expect(lines).toContain(`Sitemap: ${base}/sitemap.xml`)
  })

  it("sitemap.xml is well-formed sitemaps.org XML listing the public pages, each answering 200", async () => {
    const xml = await (await get("/sitemap.xml")).text()
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true)
    // Well-formedness: tags nest and close, text holds no raw '<' and only the predefined entities.
    const body = xml.replace(/^<\?xml[^?]*\?>\s*/, "")
    expect(xmlProblems(body)).toEqual([])
    expect(body).toMatch(/^<urlset xmlns="http:\/\/www\.sitemaps\.org\/schemas\/sitemap\/0\.9">/)
    const locs = [...xml.matchAll(/<url><loc>([^<]+)<\/loc>/g)].map((m) => m[1])
    expect(locs).toEqual(
      [
        "/",
        "/for-ai-agents",
        "/integrations",
        "/terms",
        "/whitepaper",
        "/legal-guide",
        "/agent-dashboard",
        "/docs"
      ].map((p) => `${base}${p}`)
    )
    for (const loc of locs) expect((await fetch(loc)).status, loc).toBe(200)
  })

  it("ai-plugin.json points to the OpenAPI document, which answers", async () => {
    const plugin = (await (await get("/.well-known/ai-plugin.json")).json()) as {
      name_for_model: string
      logo_url: string
      api: { url: string }
    }
    expect(plugin).toMatchObject({
      schema_version: "v1",
      name_for_human: "Agent Commerce",
      auth: { type: "user_http", authorization_type: "bearer" },
      api: { type: "openapi", url: `${base}/api/v1/agent/openapi.json` },
      legal_info_url: `${base}/terms`
    })
    expect(plugin.name_for_model).toMatch(/^[a-z_]+$/)
    const openapi = (await (await fetch(plugin.api.url)).json()) as { openapi: string }
    expect(openapi.openapi).toMatch(/^3\./)
    expect((await fetch(plugin.logo_url)).status).toBe(200)
  })

  it("mcp-tools.json has one tool per agent and commerce route: snake_case name, summary, JSON Schema input", async () => {
    const { tools } = (await (await get("/api/v1/agent/mcp-tools.json")).json()) as { tools: Array<McpTool> }
    const agentRoutes = routes.filter((r) => r.path.startsWith("/api/v1/agent/"))
    expect(tools).toHaveLength(agentRoutes.length)
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length)
    for (const r of agentRoutes) {
      const tool = tools.find((t) => t._meta.method === r.method && t._meta.path === r.path)
      expect(tool, `${r.method} ${r.path}`).toBeDefined()
      expect(tool!.name).toMatch(/^[a-z][a-z0-9_]*$/)
      expect(tool!.name.endsWith(r.name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase())).toBe(true)
      expect(tool!.description).toBe(r.summary)
      expect(tool!.inputSchema.type).toBe("object")
      expect(tool!.annotations.readOnlyHint).toBe(r.method === "GET")
      expect(tool!._meta.permission).toBe(r.permission)
    }
    const byName = (n: string) => tools.find((t) => t.name === n)!
    expect(byName("catalog_project").inputSchema).toMatchObject({
      required: ["id"],
      properties: { id: { type: "string" } }
    })
    expect(byName("evaluate").inputSchema).toMatchObject({
      required: ["projectId"],
      properties: { projectId: { type: "string", maxLength: 100 } }
    })
    expect(Object.keys(byName("catalog").inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["category", "q", "limit", "cursor"])
    )
    expect(byName("catalog").inputSchema.properties?.category.enum).toHaveLength(8)
    expect(byName("me").inputSchema).toEqual({
      type: "object",
      properties: {},
      required: [],
      additionalProperties: false
    })
    // A union body (POST /session) stays a type-object schema with its alternatives.
    expect(byName("session").inputSchema.type).toBe("object")
    expect(byName("session").inputSchema.anyOf?.length).toBeGreaterThan(1)
  })

  it("mcp.json advertises the streamable-HTTP endpoint /mcp and lists the same tools", async () => {
    const manifest = (await (await get("/.well-known/mcp.json")).json()) as { tools: Array<McpTool> }
    const { tools } = (await (await get("/api/v1/agent/mcp-tools.json")).json()) as { tools: Array<McpTool> }
    expect(manifest).toMatchObject({
      endpoint: `${base}/mcp`,
      transport: { type: "streamable-http", url: `${base}/mcp` },
      tools_url: `${base}/api/v1/agent/mcp-tools.json`,
      authentication: { type: "bearer" },
      version: "1.0.0"
    })
    expect(manifest.tools).toEqual(tools)
  })

  it("the A2A 1.0 agent card: the JSON-RPC interface at /a2a, the skills it serves, bearer and X-API-Key schemes", async () => {
    const card = (await (await get("/.well-known/agent-card.json")).json()) as {
      description: unknown
      skills: Array<{ id: unknown; name: unknown; description: string; tags: unknown }>
    }
    expect(card).toMatchObject({
      name: "Agent Commerce",
      version: "1.0.0",
      supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: true, pushNotifications: true },
      securitySchemes: {
        bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } },
        apiKey: { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } }
      },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }]
    })
    expect(typeof card.description).toBe("string")
    for (const s of card.skills) {
      expect(typeof s.id).toBe("string")
      expect(typeof s.name).toBe("string")
      expect(s.description.length).toBeGreaterThan(0)
      expect(Array.isArray(s.tags)).toBe(true)
    }
    expect(card.skills.map((s) => s.id)).toEqual([
      "browse_services",
      "buy",
      "buy_saga",
      "negotiate",
      "check_transaction",
      "list_orders",
      "deliver_order",
      "fail_order"
    ])
  })

  it("/invest/api describes the investment API: endpoints, token, 49% stake, disclaimer", async () => {
    const body = (await (await get("/invest/api")).json()) as {
      endpoints: Array<{ method: string; path: string }>
      stakePercent: unknown
      token: unknown
      disclaimer: unknown
    }
    const eps = body.endpoints.map((e) => `${e.method} ${e.path}`)
    for (const e of [
      "POST /api/v1/agent/invest",
      "POST /api/trpc/invest.invest",
      "POST /api/trpc/invest.vote",
      "GET /api/trpc/portfolio.holdings"
    ])
      expect(eps).toContain(e)
    expect(body.stakePercent).toBe(49)
    expect(body.token).toMatchObject({ symbol: "ACT", type: "utility" })
    expect(body.disclaimer).toMatch(/not investment advice/)
  })

  it("/ is an HTML landing page linking the pages and agent files, in English or Portuguese", async () => {
    const res = await get("/")
    const html = await res.text()
    expect(html).toContain('<html lang="en">')
    for (const p of [
      "/for-ai-agents?lang=en",
      "/integrations?lang=en",
      "/terms?lang=en",
      "/whitepaper?lang=en",
      "/legal-guide?lang=en",
      "/agent-dashboard",
      "/docs",
      "/api/discover",
      "/llms.txt",
      "/.well-known/mcp.json",
      "/.well-known/ai-plugin.json",
      "/.well-known/agent-card.json",
      "/sitemap.xml"
    ]) {
      expect(html, p).toContain(`href="${base}${p}"`)
    }
    const pt = await (await get("/?lang=pt")).text()
    expect(pt).toContain('<html lang="pt-BR">')
    expect(pt).toContain("não é um valor mobiliário")
    const byHeader = await get("/", { "accept-language": "pt-BR,pt;q=0.9" })
    expect(byHeader.headers.get("content-language")).toBe("pt-BR")
  })
})
