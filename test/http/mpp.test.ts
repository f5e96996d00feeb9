// End to end, on memory and Postgres: MPP discovery and health, and a paid per-request call —
// 402 with a Payment challenge → retry with the credential → 200 + Payment-Receipt → the same
// credential refused → the wallet charged once; tampered, foreign, expired-body and unfunded
// credentials are refused with the MPP problem types.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EXTERNAL_GRANTS, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger.js"
import { Ledger } from "../../src/services/Ledger.js"
import { MAX_OPEN_CHALLENGES_PER_AGENT } from "../../src/services/Mpp.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { postgresSkipReason } from "../fixtures/db.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"
const SERVICE = "svc_translate_pro" // per_call: standard 2 cents, priority 5 cents
const SELLER = "agt_seller_lexica"

/** Parses `Payment k="v", k2="v2"` (quoted-string values). */
const parseChallenge = (header: string) => {
  expect(header.startsWith("Payment ")).toBe(true)
  const params: Record<string, string> = {}
  for (const m of header.slice(8).matchAll(/([a-z]+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]] = m[2].replace(/\\(.)/g, "$1")
  return params
}
const credentialFor = (c: Record<string, string>, override: Record<string, string> = {}) =>
  `Payment ${Buffer.from(
    JSON.stringify({
      challenge: { id: c.id, realm: c.realm, method: c.method, intent: c.intent, request: c.request, expires: c.expires, digest: c.digest, header: c.header, ...override },
      payload: {}
    })
  ).toString("base64url")}`

for (const storage of ["memory", "embedded", "postgres"] as const) {
  const skip = storage === "postgres" ? postgresSkipReason : undefined
  describe.skipIf(skip !== undefined)(`MPP pay-per-request over HTTP [${storage}]`, () => {
    let server: RuntimeServer
    const url = (p: string) => `${server.baseUrl}${p}`
    const invoke = (k: AgentKey, body: unknown, credential?: string, tier = "standard") =>
      fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=${tier}`), {
        method: "POST",
        headers: { ...k.auth, "content-type": "application/json", ...(credential ? { "payment-authorization": credential } : {}) },
        body: JSON.stringify(body)
      })
    const fund = (agentId: string, amount: number) =>
      server.run(Effect.flatMap(Ledger, (l) => l.transfer({ kind: "grant", reference: `fund-${agentId}-${amount}`, from: EXTERNAL_GRANTS, to: walletAccount(agentId), amount })))
    const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))

    beforeAll(async () => {
      server = await startRuntimeServer({ storage, config: { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } })
    }, 60_000)
    afterAll(async () => {
      await server?.close()
    })

    it("GET /mpp: pending_early_access, crypto.charge and card.charge not yet available, credits active, 402 per request, 0.01 USD minimum", async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:read"])
      const res = await fetch(url(`${COMMERCE}/mpp`), { headers: k.auth })
      expect(res.status).toBe(200)
      const body = await res.json()
      expect(body).toMatchObject({
        protocol: "MPP",
        status: "pending_early_access",
        pricing: { model: "per_request", transport: "HTTP 402 Payment Required", currency: "usd", minimumChargeCents: 1, minimumCharge: "0.01 USD" },
        fallback: { method: "credits.charge", status: "active" }
      })
      expect(body.methods.map((m: { id: string; status: string }) => `${m.id}:${m.status}`)).toEqual([
        "credits.charge:active",
        "crypto.charge:not_yet_available",
        "card.charge:not_yet_available"
      ])
      expect(body.invoke.path).toBe(`${server.baseUrl}${COMMERCE}/services/{serviceId}/invoke?tier={tierId}`)
      const health = await fetch(url(`${COMMERCE}/mpp/health`), { headers: k.auth })
      expect(health.status).toBe(200)
      const h = await health.json()
      expect(h).toMatchObject({ status: "ok", protocolStatus: "pending_early_access", checks: { storage: { ok: true }, ledger: { ok: true }, credits: { ok: true } } })
      expect(typeof h.checks.storage.latencyMs).toBe("number")
      const none = await createAgentKey(server.baseUrl, ["catalog:read"])
      expect((await fetch(url(`${COMMERCE}/mpp`), { headers: none.auth })).status).toBe(403)
      expect((await fetch(url(`${COMMERCE}/mpp`))).status).toBe(401)
    })

    it("402 with a challenge → credential → 200 + Payment-Receipt → the same credential refused → charged once", async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
      await fund(k.agentId, 100)
      const sellerBefore = await balance(walletAccount(SELLER))
      const feesBefore = await balance(PLATFORM_FEES)
      const body = { input: { text: "Olá, mundo", to: "en" } }

      const first = await invoke(k, body)
      expect(first.status).toBe(402)
      expect(first.headers.get("cache-control")).toBe("no-store")
      const challenge = parseChallenge(first.headers.get("www-authenticate")!)
      expect(challenge).toMatchObject({ realm: "ai2aic-commerce", method: "credits", intent: "charge", header: "Payment-Authorization" })
      expect(challenge.id).toMatch(/^pay_/)
      expect(challenge.digest).toMatch(/^sha-256=:[A-Za-z0-9+/]+=*:$/)
      expect(Date.parse(challenge.expires) - Date.now()).toBeGreaterThan(4 * 60_000)
      const request = JSON.parse(Buffer.from(challenge.request, "base64url").toString("utf8"))
      expect(request).toEqual({ amount: "2", currency: "usd", description: "Translate Pro (Standard): one call", externalId: `${SERVICE}/standard`, recipient: walletAccount(SELLER) })
      const problem = await first.json()
      expect(problem).toMatchObject({
        type: "PaymentRequired",
        problem: "https://paymentauth.org/problems/payment-required",
        minimumChargeCents: 1,
        challenge: { id: challenge.id, request: challenge.request, requestDecoded: { amount: "2" } }
      })
      expect(problem.methods.map((m: { id: string; status: string }) => `${m.id}:${m.status}`)).toEqual([
        "credits.charge:active",
        "crypto.charge:not_yet_available",
        "card.charge:not_yet_available"
      ])
      expect(await balance(walletAccount(k.agentId))).toBe(100) // a challenge charges nothing

      const credential = credentialFor(challenge)
      const paid = await invoke(k, body, credential)
      expect(paid.status).toBe(200)
      const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-receipt")!, "base64url").toString("utf8"))
      expect(receipt).toMatchObject({ status: "success", method: "credits", intent: "charge", challengeId: challenge.id, amount: "2", currency: "usd", serviceId: SERVICE, tierId: "standard" })
      expect(receipt.reference).toMatch(/^je_/)
      const result = await paid.json()
      expect(result).toMatchObject({ serviceId: SERVICE, tierId: "standard", chargedCents: 2, output: { simulated: true }, receipt })

      const replay = await invoke(k, body, credential)
      expect(replay.status).toBe(402)
      expect(replay.headers.get("payment-receipt")).toBeNull()
      const refused = await replay.json()
      expect(refused.problem).toBe("https://paymentauth.org/problems/invalid-challenge")
      expect(refused.message).toContain("already used")
      expect(refused.challenge.id).not.toBe(challenge.id) // a fresh challenge comes with the refusal

      expect(await balance(walletAccount(k.agentId))).toBe(98)
      expect((await balance(walletAccount(SELLER))) - sellerBefore).toBe(2) // 2 cents: fee ⌊0.3⌋ = 0, seller 2
      expect((await balance(PLATFORM_FEES)) - feesBefore).toBe(0)
      // Settled like every purchase (src/services/Settlement.ts): one entry referenced by the transaction.
      expect(receipt.transactionId).toBe(result.transactionId)
      const entries = await server.run(Effect.flatMap(Ledger, (l) => l.entriesByReference(result.transactionId)))
      expect(entries.map((e) => [e.id, e.kind, e.postings.find((p) => p.account === walletAccount(k.agentId))?.amount])).toEqual([[receipt.reference, "purchase", -2]])
      expect(await server.run(Effect.flatMap(Ledger, (l) => l.entriesByReference(challenge.id)))).toEqual([])
      const check = await server.run(Effect.flatMap(Ledger, (l) => l.check))
      expect(check.ok).toBe(true)
      const health = await (await fetch(url(`${COMMERCE}/mpp/health`), { headers: k.auth })).json()
      expect(health.checks.ledger.ok).toBe(true)
      expect(health.checks.ledger.detail).toMatch(/^[1-9]\d* most recent paid requests reconcile/)
    })

    it("concurrent retries with one credential: exactly one is served and charged", async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
      await fund(k.agentId, 50)
      const body = { input: { n: 1 } }
      const challenge = parseChallenge((await invoke(k, body, undefined, "priority")).headers.get("www-authenticate")!)
      const credential = credentialFor(challenge)
      const statuses = await Promise.all(Array.from({ length: 10 }, () => invoke(k, body, credential, "priority").then((r) => r.status)))
      expect(statuses.filter((s) => s === 200)).toHaveLength(1)
      expect(statuses.filter((s) => s === 402)).toHaveLength(9)
      expect(await balance(walletAccount(k.agentId))).toBe(45)
    })

    it("refusals: tampered, another key's, another body's, malformed; unfunded then funded; per_call only; 404s", async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
      const body = { input: { text: "a" } }
      const challenge = parseChallenge((await invoke(k, body)).headers.get("www-authenticate")!)
      const problemOf = async (res: Response) => {
        expect(res.status).toBe(402)
        expect(res.headers.get("www-authenticate")).toMatch(/^Payment id="pay_/)
        return ((await res.json()) as { problem: string }).problem.replace("https://paymentauth.org/problems/", "")
      }
      const cheaper = Buffer.from(JSON.stringify({ amount: "1", currency: "usd" })).toString("base64url")
      expect(await problemOf(await invoke(k, body, credentialFor(challenge, { request: cheaper })))).toBe("verification-failed")
      expect(await problemOf(await invoke(k, { input: { text: "b" } }, credentialFor(challenge)))).toBe("verification-failed")
      expect(await problemOf(await invoke(k, body, credentialFor(challenge), "priority"))).toBe("verification-failed")
      expect(await problemOf(await invoke(k, body, "Payment not*base64"))).toBe("malformed-credential")
      expect(await problemOf(await invoke(k, body, `Payment ${Buffer.from("[]").toString("base64url")}`))).toBe("malformed-credential")
      const other = await createAgentKey(server.baseUrl, ["commerce:buy"])
      await fund(other.agentId, 10)
      expect(await problemOf(await invoke(other, body, credentialFor(challenge)))).toBe("invalid-challenge")
      // The owner's wallet is empty: payment-insufficient, the same challenge stays usable after funding.
      const insufficient = await invoke(k, body, credentialFor(challenge))
      const unfunded = await insufficient.clone().json()
      expect(await problemOf(insufficient)).toBe("payment-insufficient")
      expect(unfunded).toMatchObject({ missingCents: 2, challenge: { id: challenge.id } })
      await fund(k.agentId, 2)
      expect((await invoke(k, body, credentialFor(challenge))).status).toBe(200)
      expect(await balance(walletAccount(k.agentId))).toBe(0)
      expect(await balance(walletAccount(other.agentId))).toBe(10)

      const monthly = await fetch(url(`${COMMERCE}/services/svc_brand_images/invoke`), { method: "POST", headers: { ...k.auth, "content-type": "application/json" }, body: "{}" })
      expect(monthly.status).toBe(409)
      expect(await monthly.json()).toMatchObject({ type: "NotPayPerRequest", pricingModel: "monthly" })
      const nope = await fetch(url(`${COMMERCE}/services/svc_nope/invoke`), { method: "POST", headers: { ...k.auth, "content-type": "application/json" }, body: "{}" })
      expect(nope.status).toBe(404)
      expect((await invoke(k, body, undefined, "gold")).status).toBe(404)
      const seller = await fetch(url(`${COMMERCE}/services/${SERVICE}/invoke`), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      expect(seller.status).toBe(401)
      const readOnly = await createAgentKey(server.baseUrl, ["commerce:read"])
      expect((await invoke(readOnly, body)).status).toBe(403)
    })

    it("the paid call is a transaction in the history; wallet policies refuse with 403 (payment valid, policy denies)", async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"])
      await fund(k.agentId, 100)
      const body = { input: { q: 1 } }
      const challenge = parseChallenge((await invoke(k, body)).headers.get("www-authenticate")!)
      const paid = await (await invoke(k, body, credentialFor(challenge))).json()
      const tx = await fetch(url(`${COMMERCE}/transactions/${paid.transactionId}`), { headers: k.auth })
      expect(tx.status).toBe(200)
      expect(await tx.json()).toMatchObject({ id: paid.transactionId, status: "completed", priceCents: 2, serviceId: SERVICE, tierId: "standard", role: "buyer" })
      expect(paid.receipt.transactionId).toBe(paid.transactionId)

      const patch = await fetch(url(`${COMMERCE}/wallet`), { method: "PATCH", headers: { ...k.auth, "content-type": "application/json" }, body: JSON.stringify({ perTransactionLimitCents: 4 }) })
      expect(patch.status).toBe(200)
      const c2 = parseChallenge((await invoke(k, body, undefined, "priority")).headers.get("www-authenticate")!)
      const refused = await invoke(k, body, credentialFor(c2), "priority")
      expect(refused.status).toBe(403)
      expect(refused.headers.get("payment-receipt")).toBeNull()
      expect(await refused.json()).toMatchObject({ type: "PolicyViolation", policy: "perTransactionLimit", limitCents: 4, attemptedCents: 5 })
      expect(await balance(walletAccount(k.agentId))).toBe(98)
    })

    it("a failing seller charges nothing and leaves the challenge open", async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
      await fund(k.agentId, 10)
      const body = { input: { simulate: "fail" } }
      const challenge = parseChallenge((await invoke(k, body)).headers.get("www-authenticate")!)
      const res = await invoke(k, body, credentialFor(challenge))
      expect(res.status).toBe(502)
      expect(await res.json()).toMatchObject({ type: "SellerFailed" })
      expect(await balance(walletAccount(k.agentId))).toBe(10)
    })

    it(`an agent keeps at most ${MAX_OPEN_CHALLENGES_PER_AGENT} open challenges: issuing more drops the oldest, which is then refused`, async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:*"])
      await fund(k.agentId, 100)
      const body = { input: { text: "bounded" } }
      const challenges: Array<Record<string, string>> = []
      for (let i = 0; i < MAX_OPEN_CHALLENGES_PER_AGENT + 5; i++) {
        const res = await invoke(k, body)
        expect(res.status).toBe(402)
        challenges.push(parseChallenge(res.headers.get("www-authenticate")!))
      }
      const oldest = await invoke(k, body, credentialFor(challenges[0]))
      expect(oldest.status).toBe(402)
      expect(((await oldest.json()) as { problem: string }).problem).toMatch(/invalid-challenge$/)
      const newest = await invoke(k, body, credentialFor(challenges[challenges.length - 1]))
      expect(newest.status).toBe(200)
    }, 60_000)
  })
}
