// The owner's console over HTTP, on every storage: the overview shows the account's own agents with
// the figures their wallet pages show; an agent's audit trail says who decided what and when; a
// signed-out caller gets 401 and another account's agent 404, on every console route.
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
const owner = (k: AgentKey) => ({ cookie: k.cookie })

describeEachStorage("owner's console over HTTP", (storage) => {
  beforeAll(async () => {
    server = await startServer({ storage, config: { rateLimitPerMinute: 10_000, rateLimitPerDay: 100_000 } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("the overview lists the account's own agents with their wallet pages' figures", async () => {
    const first = await createAgentKey(server.baseUrl, ["commerce:*"])
    const second = await createAgentKey(server.baseUrl, ["commerce:*"], {
      cookie: first.cookie,
      accountId: first.accountId
    })
    const stranger = await createAgentKey(server.baseUrl, ["commerce:*"])
    expect(
      (
        await call("/api/v1/agent/commerce/wallet/topup", {
          method: "POST",
          headers: first.auth,
          body: { amountCents: 4_321 }
        })
      ).status
    ).toBe(201)
    const limits = { perTransactionLimitCents: 1_000, dailyLimitCents: 3_000, monthlyLimitCents: 20_000 }
    const patched = await call(`/api/dashboard/commerce/wallets/${second.agentId}`, {
      method: "PATCH",
      headers: owner(first),
      body: limits
    })
    expect(patched.status).toBe(200)

    const overview = await call("/api/dashboard/overview", { headers: owner(first) })
    expect(overview.status).toBe(200)
    const ids = overview.body.agents.map((a: { id: string }) => a.id)
    expect([...ids].sort()).toEqual([first.agentId, second.agentId].sort())
    for (const row of overview.body.agents) {
      const wallet = (await call(`/api/dashboard/commerce/wallets/${row.id}`, { headers: owner(first) })).body
      expect(row).toMatchObject({
        balanceCents: wallet.balanceCents,
        spentTodayCents: wallet.spentTodayCents,
        pendingApprovals: wallet.pendingApprovals,
        limits: {
          perPurchaseCents: wallet.policies.perTransactionLimitCents,
          dailyCents: wallet.policies.dailyLimitCents,
          monthlyCents: wallet.policies.monthlyLimitCents
        }
      })
    }
    const byId = new Map(overview.body.agents.map((a: { id: string }) => [a.id, a]))
    expect(byId.get(first.agentId)).toMatchObject({ balanceCents: 4_321, frozen: false, lastRefusal: null })
    expect(byId.get(second.agentId)).toMatchObject({
      limits: { perPurchaseCents: 1_000, dailyCents: 3_000, monthlyCents: 20_000 }
    })
    expect((await call("/api/dashboard/overview", { headers: owner(stranger) })).body.agents).toHaveLength(1)
  })

  it("the audit trail names who changed the policy (owner or key) and when, newest first, in pages", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    const before = Date.now()
    expect(
      (
        await call(`/api/dashboard/commerce/wallets/${k.agentId}`, {
          method: "PATCH",
          headers: owner(k),
          body: { dailyLimitCents: 4_000 }
        })
      ).status
    ).toBe(200)
    expect(
      (
        await call("/api/v1/agent/commerce/wallet", {
          method: "PATCH",
          headers: k.auth,
          body: { dailyLimitCents: 3_500 }
        })
      ).status
    ).toBe(200)
    expect(
      (
        await call("/api/v1/agent/commerce/wallet", {
          method: "PATCH",
          headers: k.auth,
          body: { dailyLimitCents: 9_000 }
        })
      ).status
    ).toBe(403)

    const page = await call(`/api/dashboard/agents/${k.agentId}/audit?limit=1`, { headers: owner(k) })
    expect(page.status).toBe(200)
    expect(page.body.entries).toEqual([
      expect.objectContaining({
        action: "policy.changed",
        actor: { kind: "agent_key", id: k.keyId },
        before: { dailyLimitCents: 4_000 },
        after: { dailyLimitCents: 3_500 }
      })
    ])
    const next = await call(`/api/dashboard/agents/${k.agentId}/audit?limit=1&cursor=${page.body.nextCursor}`, {
      headers: owner(k)
    })
    expect(next.body.entries).toEqual([
      expect.objectContaining({
        action: "policy.changed",
        actor: { kind: "owner", id: k.accountId },
        after: { dailyLimitCents: 4_000 }
      })
    ])
    expect(Date.parse(next.body.entries[0].createdAt)).toBeGreaterThanOrEqual(before - 1_000)
    expect((await call(`/api/dashboard/agents/${k.agentId}/audit?limit=0`, { headers: owner(k) })).status).toBe(400)
  })

  it("the approvals inbox names the agent, service, tier and seller and why it waits; a decision shows who and when", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:*"])
    const topup = { method: "POST", headers: k.auth, body: { amountCents: 10_000 } }
    expect((await call("/api/v1/agent/commerce/wallet/topup", topup)).status).toBe(201)
    const manual = {
      method: "PATCH",
      headers: owner(k),
      body: { autonomyLevel: "manual", perTransactionLimitCents: null }
    }
    expect((await call(`/api/dashboard/commerce/wallets/${k.agentId}`, manual)).status).toBe(200)
    const service = (await call("/api/v1/agent/commerce/services/svc_doc_translate", { headers: k.auth })).body
    const buy = {
      method: "POST",
      headers: k.auth,
      body: { serviceId: "svc_doc_translate", tierId: "starter", input: { text: "hi" } }
    }
    const asked = await call("/api/v1/agent/commerce/buy", buy)
    expect(asked.body.status).toBe("pending_approval")

    const inbox = await call("/api/dashboard/commerce/approvals?status=pending", { headers: owner(k) })
    expect(inbox.status).toBe(200)
    expect(inbox.body.data).toEqual([
      expect.objectContaining({
        id: asked.body.approval.id,
        agentId: k.agentId,
        agentName: expect.stringMatching(/^agent-/),
        serviceName: service.name,
        tierName: service.tiers.find((t: { id: string }) => t.id === "starter").name,
        sellerAgentId: service.sellerAgentId,
        sellerName: expect.any(String),
        reason: "manual",
        reasonText: expect.stringContaining("waits for you"),
        decidedBy: null,
        decidedAt: null
      })
    ])
    const approveKey = { method: "POST", headers: { ...owner(k), "content-type": "application/json" } }
    const approved = await call(`/api/dashboard/commerce/approvals/${asked.body.approval.id}/approve`, approveKey)
    expect(approved.body).toMatchObject({ approval: { status: "approved" } })
    expect((await call("/api/dashboard/commerce/approvals?status=pending", { headers: owner(k) })).body.data).toEqual(
      []
    )
    const decided = (await call("/api/dashboard/commerce/approvals?status=approved", { headers: owner(k) })).body.data
    expect(decided[0]).toMatchObject({
      status: "approved",
      decidedBy: `account:${k.accountId}`,
      decidedAt: expect.any(String)
    })
    const trail = (await call(`/api/dashboard/agents/${k.agentId}/audit`, { headers: owner(k) })).body.entries
    expect(trail.filter((e: { action: string }) => e.action.startsWith("approval."))).toEqual([
      expect.objectContaining({
        action: "approval.approved",
        actor: { kind: "owner", id: k.accountId },
        subjectId: asked.body.approval.id,
        createdAt: decided[0].decidedAt
      })
    ])
  })

  it("signed out → 401; another account's agent → 404 on the audit trail and the export", async () => {
    const mine = await createAgentKey(server.baseUrl, ["commerce:read"])
    const theirs = await createAgentKey(server.baseUrl, ["commerce:read"])
    expect((await call("/api/dashboard/overview")).status).toBe(401)
    expect((await call(`/api/dashboard/agents/${mine.agentId}/audit`)).status).toBe(401)
    expect((await call(`/api/dashboard/agents/${theirs.agentId}/audit`, { headers: owner(mine) })).status).toBe(404)
    const res = await fetch(`${server.baseUrl}/api/dashboard/agents/${theirs.agentId}/export.csv?kind=audit`, {
      headers: owner(mine)
    })
    expect(res.status).toBe(404)
    expect(
      (await call(`/api/dashboard/agents/${mine.agentId}/export.csv?kind=everything`, { headers: owner(mine) })).status
    ).toBe(400)
  })
})
