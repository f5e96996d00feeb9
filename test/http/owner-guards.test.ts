// An owner's dashboard cookie cannot be spent by another site however the path is spelled: the
// router collapses slashes, ignores case, decodes escapes and drops a trailing slash or `;…`, so
// every spelling that reaches a handler must meet the same cross-site and JSON-only guards as the
// canonical one. Requests are sent raw (node:http), since fetch would tidy the path first.
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { canonicalPath, guardPath, routedPath } from "../../src/http/routePath.js"
import { routeTable } from "../../src/http/routeTable.js"
import { Api } from "../../src/http/api.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
let owner: AgentKey
let approvalId: string
beforeAll(async () => {
  server = await startServer()
  owner = await createAgentKey(server.baseUrl, ["commerce:*"])
  // A purchase that waits for the owner: what a forged approve would spend.
  const json = (path: string, method: string, body: unknown) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { ...owner.auth, "content-type": "application/json" },
      body: JSON.stringify(body)
    }).then((r) => r.json())
  await json("/api/v1/agent/commerce/wallet/topup", "POST", { amountCents: 500 })
  await json("/api/v1/agent/commerce/wallet", "PATCH", { autonomyLevel: "manual" })
  const pending = (await json("/api/v1/agent/commerce/buy", "POST", {
    serviceId: "svc_translate_pro",
    tierId: "priority",
    input: "wait"
  })) as { approval: { id: string } }
  approvalId = pending.approval.id
})
afterAll(async () => {
  await server?.close()
})

/** One request with the request-target exactly as given. */
const raw = (target: string, method: string, headers: Record<string, string>, body: string) =>
  new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: target,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => (text += c))
        res.on("end", () => {
          let body: Record<string, unknown> = { text }
          try {
            body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>)
          } catch {
            // Not JSON: compared as text.
          }
          resolve({ status: res.statusCode ?? 0, body })
        })
      }
    )
    req.on("error", reject)
    req.end(body)
  })

/** Every spelling of an /api/ path the router (or a client's URL tidying) may bring to the same handler. */
const spellings = (path: string): ReadonlyArray<string> => {
  const rest = path.slice("/api/".length)
  const [second, ...tail] = rest.split("/")
  const after = tail.join("/")
  return [
    `/${path}`,
    `/API/${rest}`,
    `/Api/${second.toUpperCase()}/${after}`,
    `/api//${rest}`,
    `/api/./${rest}`,
    `/.${path}`,
    `/api/x/../${rest}`,
    `${path}/`,
    `${path};x`,
    `/%61pi/${rest}`,
    `/api/%${second.charCodeAt(0).toString(16)}${second.slice(1)}/${after}`,
    `//API//${rest}`
  ]
}

/** The owner's cookie writes: every write under /api/dashboard, with the ids of this owner's things. */
const cookieWrites = () =>
  routeTable(Api)
    .filter((r) => r.method !== "GET" && r.path.startsWith("/api/dashboard/"))
    .map((r) => ({
      method: r.method.toUpperCase(),
      path: r.path
        .replace(":agentId", owner.agentId)
        .replace(":keyId", owner.keyId)
        .replace(":id", r.path.includes("approvals") ? approvalId : "prop_none")
    }))

const refusal = (r: { status: number; body: Record<string, unknown> }) => ({
  status: r.status,
  type: r.body.type,
  message: r.body.message
})

describe("the owner's cookie on every spelling of a dashboard write", () => {
  it("the guard's path is the router's: slashes collapsed, case folded, escapes decoded, dot segments and trailing slash gone", () => {
    for (const s of spellings("/api/dashboard/signout")) expect(guardPath(s), s).toBe("/api/dashboard/signout")
    expect(guardPath("/API/Dashboard/keys/KEY_Ab/revoke?x=1")).toBe("/api/dashboard/keys/key_ab/revoke")
    // Ids keep their case where the path is compared as a request (Idempotency-Key).
    expect(canonicalPath("//API//dashboard/keys/KEY_Ab/revoke/?x=1")).toBe("/API/dashboard/keys/KEY_Ab/revoke")
    // The router itself matches dot segments literally.
    expect(routedPath("/api/./dashboard/keys/")).toBe("/api/./dashboard/keys")
  })

  it("a read on a spelling the router does not match is a 404, never a 405 naming the method it was sent with", async () => {
    for (const s of ["/api/./dashboard/keys", "/./api/dashboard/keys", "/api/x/../dashboard/keys"]) {
      const r = await raw(s, "GET", { cookie: owner.cookie }, "")
      expect(r.status, `${s}: ${JSON.stringify(r.body)}`).not.toBe(405)
      expect(r.status, s).toBeLessThan(500)
    }
    const routed = await raw("//API//dashboard/keys/", "GET", { cookie: owner.cookie }, "")
    expect(routed.status).toBe(200)
  })

  it("a cross-site JSON write with the cookie is refused on every spelling, as on the canonical path", async () => {
    const crossSite = { cookie: owner.cookie, "content-type": "application/json", origin: "https://evil.example" }
    const writes = cookieWrites()
    expect(writes.map((w) => w.path)).toEqual(
      expect.arrayContaining(["/api/dashboard/signout", `/api/dashboard/commerce/approvals/${approvalId}/approve`])
    )
    for (const w of writes) {
      const canonical = await raw(w.path, w.method, crossSite, "{}")
      expect(canonical.status, w.path).toBe(403)
      for (const s of spellings(w.path)) {
        expect(refusal(await raw(s, w.method, crossSite, "{}")), `${w.method} ${s}`).toEqual(refusal(canonical))
      }
    }
  })

  it("a form post (text/plain, urlencoded) with the cookie is refused on every spelling, as on the canonical path", async () => {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded"]) {
      const form = { cookie: owner.cookie, "content-type": contentType }
      for (const w of cookieWrites()) {
        const canonical = await raw(w.path, w.method, form, "a=b")
        expect(canonical.status, w.path).toBe(403)
        for (const s of spellings(w.path))
          expect(refusal(await raw(s, w.method, form, "a=b")), `${contentType} ${w.method} ${s}`).toEqual(
            refusal(canonical)
          )
      }
    }
  })

  it("the owner's cookie on a tRPC mutation from another site is refused on every spelling; the procedure name keeps its case", async () => {
    const crossSite = { cookie: owner.cookie, "content-type": "application/json", origin: "https://evil.example" }
    for (const procedure of ["invest.invest", "subscription.createCheckout"]) {
      const path = `/api/trpc/${procedure}`
      const canonical = await raw(path, "POST", crossSite, "{}")
      expect(canonical.status, path).toBe(403)
      for (const s of spellings(path)) {
        expect(refusal(await raw(s, "POST", crossSite, "{}")), s).toEqual(refusal(canonical))
      }
    }
    const catalog = await raw("//API//trpc/publicApi.catalog", "GET", {}, "")
    expect(catalog.status).toBe(200)
  })

  it("a key-authenticated write that is not JSON is 415 on every spelling", async () => {
    const path = "/api/v1/agent/commerce/buy"
    const canonical = await raw(
      path,
      "POST",
      { ...owner.auth, "content-type": "text/plain" },
      "serviceId=svc_code_review"
    )
    expect(canonical.status).toBe(415)
    for (const s of spellings(path)) {
      expect(
        refusal(await raw(s, "POST", { ...owner.auth, "content-type": "text/plain" }, "serviceId=svc_code_review")),
        s
      ).toEqual(refusal(canonical))
    }
  })

  it("a retried buy under the same Idempotency-Key is the same request on any spelling: the first purchase replayed, no second charge", async () => {
    const buyer = await createAgentKey(server.baseUrl, ["commerce:*"])
    const json = { ...buyer.auth, "content-type": "application/json" }
    expect(
      (await raw("/api/v1/agent/commerce/wallet/topup", "POST", json, JSON.stringify({ amountCents: 5_000 }))).status
    ).toBe(201)
    const wallet = async () =>
      (await raw("/api/v1/agent/commerce/wallet", "GET", buyer.auth, "")).body.balanceCents as number
    const headers = { ...json, "idempotency-key": "spelled-1" }
    const body = JSON.stringify({ serviceId: "svc_doc_translate", tierId: "starter", input: "once" })
    const first = await raw("/api/v1/agent/commerce/buy", "POST", headers, body)
    expect(first.status).toBe(201)
    const after = await wallet()
    const id = (first.body.transaction as { id: string }).id
    for (const s of ["//api//v1/agent/commerce/buy/", "/api/v1/agent/commerce/buy;x", "/%61pi/v1/agent/commerce/buy"]) {
      const again = await raw(s, "POST", headers, body)
      expect(again.status, s).toBe(201)
      expect((again.body.transaction as { id: string }).id, s).toBe(id)
    }
    expect(await wallet()).toBe(after)
  })

  it("after all of it the owner is still signed in, the key still works and the purchase still waits", async () => {
    const keys = await fetch(`${server.baseUrl}/api/dashboard/keys`, { headers: { cookie: owner.cookie } })
    expect(keys.status).toBe(200)
    const listed = (await keys.json()) as ReadonlyArray<{ id: string; revokedAt: string | null }>
    expect(listed.find((k) => k.id === owner.keyId)).toMatchObject({ revokedAt: null })
    const me = await fetch(`${server.baseUrl}/api/v1/agent/commerce/approvals?status=pending`, { headers: owner.auth })
    expect(me.status).toBe(200)
    expect(((await me.json()) as { data: ReadonlyArray<{ id: string }> }).data.map((a) => a.id)).toEqual([approvalId])
  })
})
