// End to end, on every storage: catalog, evaluation, project creation (quota, credits, input
// checks), the background build reaching live or a triggered failure through /status/:id, and sessions.
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Events } from "../../src/services/events/Events.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { eventually } from "../fixtures/wait.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64")

// The builds' simulated steps take real time; each test makes its own agents and the server is the describe's own.
describeEachStorage("projects over HTTP", { concurrent: "all" }, (storage) => {
  let server: RuntimeServer
  const url = (p: string) => `${server.baseUrl}${p}`
  const get = (p: string, k: AgentKey) => fetch(url(p), { headers: k.auth })
  const post = (p: string, k: AgentKey, body: unknown) =>
    fetch(url(p), {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  const fund = (k: AgentKey, amount: number) =>
    server.run(
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${k.agentId}-${amount}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(k.agentId),
          amount
        })
      )
    )
  const setPlan = (k: AgentKey, plan: "starter" | "pro" | "scale") =>
    server.run(Effect.flatMap(Keys, (keys) => keys.setAccountPlan(k.accountId, plan)))
  const builder = (plan: "starter" | "pro" | "scale", credits: number) =>
    createAgentKey(server.baseUrl, ["create", "catalog:read", "evaluate", "acquire"]).then(async (k) => {
      await setPlan(k, plan)
      await fund(k, credits)
      return k
    })
  const waitForTerminal = (k: AgentKey, id: string) =>
    eventually(
      async () => await (await get(`/api/v1/agent/status/${id}`, k)).json(),
      (body) => body.build.status === "live" || body.build.status === "failed",
      { message: `build ${id} finished` }
    )

  beforeAll(async () => {
    server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("GET /catalog filters, sorts and pages; bad parameters are 400 naming the field", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read"])
    const res = await get("/api/v1/agent/catalog?category=Communication&sort=price&order=desc", k)
    expect(res.status).toBe(200)
    const page = await res.json()
    expect(page.data.map((p: { id: string }) => p.id)).toEqual(["prj_zapleads", "prj_clinica_zap", "prj_inboxly"])
    expect(page.nextCursor).toBeNull()
    const p1 = await (await get("/api/v1/agent/catalog?limit=8&sort=mrr&minRating=4.5", k)).json()
    expect(p1.data).toHaveLength(8)
    const p2 = await (
      await get(`/api/v1/agent/catalog?limit=8&sort=mrr&minRating=4.5&cursor=${encodeURIComponent(p1.nextCursor)}`, k)
    ).json()
    expect(p2.nextCursor).toBeNull()
    expect([...p1.data, ...p2.data].map((p: { id: string }) => p.id)).toHaveLength(10)
    expect(p1.data[0]).toMatchObject({ id: "prj_helpdesk_genie", metrics: { mrrCents: 1450000 } })
    const text = await (await get("/api/v1/agent/catalog?q=shopify", k)).json()
    expect(text.data.map((p: { id: string }) => p.id)).toEqual(["prj_resolve_bot"])
    for (const [query, field] of [
      ["minRating=9", "minRating"],
      ["sort=cheapest", "sort"],
      ["minPriceCents=-1", "minPriceCents"],
      ["category=Gardening", "category"],
      ["limit=0", "limit"]
    ]) {
      const bad = await get(`/api/v1/agent/catalog?${query}`, k)
      expect(bad.status, query).toBe(400)
      expect((await bad.json()).field, query).toBe(field)
    }
    const cursor = await get("/api/v1/agent/catalog?cursor=bogus", k)
    expect(cursor.status).toBe(400)
    expect(await cursor.json()).toMatchObject({ type: "InvalidInput", field: "cursor" })
  })

  it("GET /catalog/:id has the full detail; unknown ids are 404", async () => {
    const k = await createAgentKey(server.baseUrl, ["catalog:read"])
    const d = await (await get("/api/v1/agent/catalog/prj_pr_sentinel", k)).json()
    expect(d).toMatchObject({
      id: "prj_pr_sentinel",
      template: { id: "pr-review-bot", revenue_share_creator: "85%", revenue_share_platform: "15%" },
      price: { askingPriceCents: 24000000, currency: "usd" },
      revenueShare: { creatorPercent: 85, platformPercent: 15 },
      metrics: { mrrCents: 880000 },
      annualRevenueCents: 10560000,
      revenueMultiple: 2.27
    })
    const missing = await get("/api/v1/agent/catalog/prj_nope", k)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ type: "NotFound", resource: "project", id: "prj_nope" })
  })

  it("POST /evaluate scores by the documented rule", async () => {
    const k = await createAgentKey(server.baseUrl, ["evaluate"])
    const res = await post("/api/v1/agent/evaluate", k, { projectId: "prj_edgeship" })
    expect(res.status).toBe(200)
    const e = await res.json()
    expect([e.score, e.recommendation, e.evaluator]).toEqual([62, "buy", "rules-v1"])
    expect(e.reasons.map((r: { points: number }) => r.points)).toEqual([12, 25, 15, 8, 1, 1])
    expect((await post("/api/v1/agent/evaluate", k, { projectId: "prj_nope" })).status).toBe(404)
  })

  it("a build reaches live in the background, visible through /status/:id, with an event at each change", async () => {
    const k = await builder("starter", 1_000)
    const res = await post("/api/v1/agent/create", k, {
      name: "Clinic bot",
      templateId: "whatsapp-crm-bot",
      description: "Appointment reminders over WhatsApp",
      inputs: [
        { kind: "csv", mediaType: "text/csv", content: "patient,phone\nAna,+5511999990000\n" },
        { kind: "image", mediaType: "image/png", content: PNG, name: "logo.png" }
      ]
    })
    expect(res.status).toBe(202)
    const created = await res.json()
    expect(created).toMatchObject({ costCents: 140, build: { status: "queued", progressPercent: 0, simulated: true } })
    expect(created.inputs.map((i: { detected: string }) => i.detected)).toEqual([
      "CSV, 2 columns × 1 data row",
      "PNG image"
    ])
    const done = await waitForTerminal(k, created.id)
    expect(done.build).toMatchObject({ status: "live", progressPercent: 100, failureReason: null })
    expect(done.build.steps.map((s: { status: string }) => s.status)).toEqual([
      "queued",
      "analyzing",
      "generating",
      "building",
      "deploying",
      "live"
    ])
    expect(Date.parse(done.build.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.build.startedAt) + 5 * 500)
    const events = await server.run(Effect.flatMap(Events, (e) => e.listForAgent(k.agentId, 50)))
    expect(
      events
        .filter((e) => e.type === "build.status_changed")
        .map((e) => e.data.status)
        .reverse()
    ).toEqual(["queued", "analyzing", "generating", "building", "deploying", "live"])
    expect(await server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(k.agentId))))).toBe(860)
    // Another agent cannot see it.
    const other = await createAgentKey(server.baseUrl, ["create"])
    expect((await get(`/api/v1/agent/status/${created.id}`, other)).status).toBe(404)
  }, 30_000)

  it("a triggered failure ends in failed with its reason, and the credits come back", async () => {
    const k = await builder("pro", 1_000)
    const created = await (
      await post("/api/v1/agent/create", k, { name: "Doomed", description: "Will not deploy [fail:deploying]" })
    ).json()
    const done = await waitForTerminal(k, created.id)
    expect(done.build).toMatchObject({
      status: "failed",
      progressPercent: 80,
      failureReason: "the deploying step failed (simulated failure requested for this build)"
    })
    expect(done.build.steps.at(-1)).toMatchObject({ status: "failed", message: done.build.failureReason })
    expect(await server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(k.agentId))))).toBe(1_000)
  }, 30_000)

  it("quota: a Starter account's second project and a Pro account's sixth are refused (403)", async () => {
    const starter = await builder("starter", 10_000)
    const body = { name: "Thing", templateId: "habit-planner" }
    expect((await post("/api/v1/agent/create", starter, body)).status).toBe(202)
    const refused = await post("/api/v1/agent/create", starter, body)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({
      type: "ProjectQuotaExceeded",
      planId: "starter",
      limit: 1,
      used: 1,
      message: "the Starter plan allows 1 project and this account has 1; upgrade the plan to create more"
    })
    const pro = await builder("pro", 10_000)
    for (let i = 0; i < 5; i++) expect((await post("/api/v1/agent/create", pro, body)).status).toBe(202)
    const sixth = await post("/api/v1/agent/create", pro, body)
    expect(sixth.status).toBe(403)
    expect(await sixth.json()).toMatchObject({ type: "ProjectQuotaExceeded", planId: "pro", limit: 5, used: 5 })
    // The quota is the account's: a second agent of the Pro account is refused too.
    const sibling = await createAgentKey(server.baseUrl, ["create"], { cookie: pro.cookie, accountId: pro.accountId })
    await fund(sibling, 1_000)
    expect((await post("/api/v1/agent/create", sibling, body)).status).toBe(403)
  })

  it("create refuses bad inputs (400 naming the input) and an empty wallet (402)", async () => {
    const k = await builder("scale", 1_000)
    const bad = await post("/api/v1/agent/create", k, {
      name: "X",
      templateId: "habit-planner",
      inputs: [
        { kind: "text", mediaType: "text/plain", content: "fine" },
        { kind: "pdf", mediaType: "application/pdf", content: PNG }
      ]
    })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({
      type: "InvalidInput",
      field: "inputs[1].content",
      message: "inputs[1].content: declared application/pdf but the bytes are PNG image"
    })
    const badKind = await post("/api/v1/agent/create", k, {
      name: "X",
      templateId: "habit-planner",
      inputs: [{ kind: "video", mediaType: "video/mp4", content: "" }]
    })
    expect(badKind.status).toBe(400)
    const poor = await createAgentKey(server.baseUrl, ["create"])
    const broke = await post("/api/v1/agent/create", poor, { name: "X", templateId: "habit-planner" })
    expect(broke.status).toBe(402)
    expect(await broke.json()).toMatchObject({ type: "InsufficientFunds", requiredCents: 100, balanceCents: 0 })
  })

  it("a session runs browse → evaluate → create over HTTP and is private to its agent", async () => {
    const k = await builder("starter", 1_000)
    const start = await post("/api/v1/agent/session", k, { action: "start", goal: "create" })
    expect(start.status).toBe(200)
    const { session } = await start.json()
    expect(session).toMatchObject({ state: "started", goal: "create", expired: false })
    const browse = await (
      await post("/api/v1/agent/session", k, { action: "browse", sessionId: session.id, filters: { q: "invoice" } })
    ).json()
    expect(browse.result.catalog.data.map((p: { id: string }) => p.id)).toEqual(["prj_cobranca_facil"])
    const early = await post("/api/v1/agent/session", k, { action: "acquire", sessionId: session.id })
    expect(early.status).toBe(409)
    const evaluated = await (
      await post("/api/v1/agent/session", k, {
        action: "evaluate",
        sessionId: session.id,
        projectId: "prj_cobranca_facil"
      })
    ).json()
    expect(evaluated.result.evaluation).toMatchObject({ score: 74, recommendation: "buy" })
    expect(evaluated.session.nextActions).toEqual(["browse", "evaluate", "acquire", "create", "close"])
    // Acquire (REST) starts a hosted checkout; paying it lands the project in the portfolio.
    const acquired = await post("/api/v1/agent/acquire", k, { projectId: "prj_cobranca_facil" })
    expect(acquired.status).toBe(201)
    const checkout = await acquired.json()
    expect(checkout.checkoutUrl).toContain(`/checkout/fake/${checkout.sessionId}`)
    const pay = await fetch(`${server.baseUrl}/checkout/fake/${checkout.sessionId}/pay`, {
      method: "POST",
      redirect: "manual"
    })
    expect(pay.status).toBeLessThan(400)
    const portfolio = await (await get("/api/v1/agent/portfolio", k)).json()
    expect(portfolio.acquisitions.map((a: { projectId: string; status: string }) => [a.projectId, a.status])).toEqual([
      ["prj_cobranca_facil", "paid"]
    ])
    expect(portfolio.acquisitionsNextCursor).toBeNull()
    const tooMany = await get("/api/v1/agent/portfolio?limit=101", k)
    expect(tooMany.status).toBe(400)
    expect(await tooMany.json()).toMatchObject({ field: "limit" })
    // A second acquisition of a project already owned is refused.
    expect((await post("/api/v1/agent/acquire", k, { projectId: "prj_cobranca_facil" })).status).toBe(409)
    expect((await post("/api/v1/agent/acquire", k, { projectId: "prj_nope" })).status).toBe(404)
    const created = await (
      await post("/api/v1/agent/session", k, {
        action: "create",
        sessionId: session.id,
        project: { name: "Billing", templateId: "invoice-autopay" }
      })
    ).json()
    expect(created.session.state).toBe("completed")
    expect(created.result.project.build.status).toBe("queued")
    const read = await get(`/api/v1/agent/session/${session.id}`, k)
    expect(read.status).toBe(200)
    expect((await read.json()).steps.map((s: { action: string }) => s.action)).toEqual([
      "start",
      "browse",
      "evaluate",
      "create"
    ])
    const other = await createAgentKey(server.baseUrl, ["catalog:read"])
    expect((await get(`/api/v1/agent/session/${session.id}`, other)).status).toBe(404)
    expect((await post("/api/v1/agent/session", other, { action: "browse", sessionId: session.id })).status).toBe(404)
    const noPerm = await post("/api/v1/agent/session", other, {
      action: "create",
      sessionId: session.id,
      project: { name: "x", templateId: "habit-planner" }
    })
    expect(noPerm.status).toBe(403)
    const unknownAction = await post("/api/v1/agent/session", k, { action: "dance", sessionId: session.id })
    expect(unknownAction.status).toBe(400)
  })
})
