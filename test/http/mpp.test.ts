// End to end, on every storage: MPP discovery and health, and a paid per-request call —
// 402 with a Payment challenge → retry with the credential → 200 + Payment-Receipt → the same
// credential refused → the wallet charged once; tampered, foreign, expired-body and unfunded
// credentials are refused with the MPP problem types.
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, PLATFORM_FEES, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { MAX_OPEN_CHALLENGES_PER_AGENT } from "../../src/services/mpp/policy.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
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
      challenge: {
        id: c.id,
        realm: c.realm,
        method: c.method,
        intent: c.intent,
        request: c.request,
        expires: c.expires,
        digest: c.digest,
        header: c.header,
        opaque: c.opaque,
        ...override
      },
      payload: {}
    })
  ).toString("base64url")}`

const PROBLEMS = "https://paymentauth.org/problems/"
const WALLET_SHORT = "tag:ai2aic-commerce,2026:problems/wallet-insufficient-funds"
const TITLES: Record<string, string> = {
  "payment-required": "Payment Required",
  "malformed-credential": "Malformed Payment Credential",
  "invalid-challenge": "Invalid Payment Challenge",
  "payment-expired": "Payment Expired",
  "verification-failed": "Payment Verification Failed",
  "method-unsupported": "Payment Method Unsupported",
  [WALLET_SHORT]: "Wallet Insufficient Funds"
}
/** Every challenge id any 402 of this file handed out: each 402 must bring a new one. */
const seenChallengeIds = new Set<string>()

/**
 * The draft's checks on a payment refusal: the status, `application/problem+json` with type, title,
 * status, detail (RFC 9457), `Cache-Control: no-store`, a WWW-Authenticate Payment challenge that
 * is fresh (an id never seen before, 256-bit HMAC in base64url) and the same as the body's
 * `challengeId`, Retry-After when waiting can help. Returns the problem's short name and body.
 */
const strictRefusal = async (res: Response, expected: string, status = 402) => {
  expect(res.status).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
  expect(res.headers.get("cache-control")).toBe("no-store")
  expect(res.headers.get("payment-receipt")).toBeNull()
  const challenge = parseChallenge(res.headers.get("www-authenticate")!)
  expect(challenge.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
  expect(seenChallengeIds.has(challenge.id)).toBe(false)
  seenChallengeIds.add(challenge.id)
  const body = await res.json()
  const type = expected === WALLET_SHORT ? WALLET_SHORT : `${PROBLEMS}${expected}`
  expect(body).toMatchObject({
    type,
    title: TITLES[expected],
    status,
    challengeId: challenge.id,
    challenge: { id: challenge.id, request: challenge.request }
  })
  expect(typeof body.detail).toBe("string")
  expect(typeof body.hint).toBe("string")
  expect(body.instance).toMatch(/\/invoke$|\/buy$/)
  if (expected === WALLET_SHORT) expect(res.headers.get("retry-after")).toBeNull()
  else {
    expect(res.headers.get("retry-after")).toBe("0")
    expect(body.retryAfter).toBe(0)
  }
  return { challenge, body }
}

describeEachStorage("MPP pay-per-request over HTTP", { concurrent: "storages" }, (storage) => {
  let server: RuntimeServer
  const url = (p: string) => `${server.baseUrl}${p}`
  const invoke = (k: AgentKey, body: unknown, credential?: string, tier = "standard") =>
    fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=${tier}`), {
      method: "POST",
      headers: {
        ...k.auth,
        "content-type": "application/json",
        ...(credential ? { "payment-authorization": credential } : {})
      },
      body: JSON.stringify(body)
    })
  const fund = (agentId: string, amount: number) =>
    server.run(
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${agentId}-${amount}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(agentId),
          amount
        })
      )
    )
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
      pricing: {
        model: "per_request",
        transport: "HTTP 402 Payment Required",
        currency: "usd",
        minimumChargeCents: 1,
        minimumCharge: "0.01 USD"
      },
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
    expect(h).toMatchObject({
      status: "ok",
      protocolStatus: "pending_early_access",
      checks: { storage: { ok: true }, ledger: { ok: true }, credits: { ok: true } }
    })
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

    const asked = Date.now()
    const first = await invoke(k, body)
    const answered = Date.now()
    const { challenge, body: problem } = await strictRefusal(first, "payment-required")
    expect(challenge).toMatchObject({
      realm: "ai2aic-commerce",
      method: "credits",
      intent: "charge",
      header: "Payment-Authorization"
    })
    // RFC 9530 over the body bytes as sent.
    expect(challenge.digest).toBe(`sha-256=:${createHash("sha256").update(JSON.stringify(body)).digest("base64")}:`)
    // 5 minutes from when it was issued (docs/mpp.md), bracketed by this request's send and answer (RFC 3339 may drop the milliseconds).
    expect(Date.parse(challenge.expires)).toBeGreaterThanOrEqual(Math.floor(asked / 1000) * 1000 + 5 * 60_000)
    expect(Date.parse(challenge.expires)).toBeLessThanOrEqual(answered + 5 * 60_000)
    const request = JSON.parse(Buffer.from(challenge.request, "base64url").toString("utf8"))
    expect(request).toEqual({
      amount: "2",
      currency: "usd",
      description: "Translate Pro (Standard): one call",
      externalId: `${SERVICE}/standard`,
      recipient: walletAccount(SELLER)
    })
    expect(problem).toMatchObject({
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
    expect(paid.headers.get("cache-control")).toBe("private")
    const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-receipt")!, "base64url").toString("utf8"))
    expect(receipt).toMatchObject({
      status: "success",
      method: "credits",
      intent: "charge",
      challengeId: challenge.id,
      amount: "2",
      currency: "usd",
      serviceId: SERVICE,
      tierId: "standard"
    })
    expect(receipt.reference).toMatch(/^je_/)
    const result = await paid.json()
    expect(result).toMatchObject({
      serviceId: SERVICE,
      tierId: "standard",
      chargedCents: 2,
      output: { simulated: true },
      receipt
    })

    const replay = await invoke(k, body, credential)
    const { body: refused } = await strictRefusal(replay, "invalid-challenge")
    expect(refused.detail).toContain("already used")

    expect(await balance(walletAccount(k.agentId))).toBe(98)
    expect((await balance(walletAccount(SELLER))) - sellerBefore).toBe(2) // 2 cents: fee ⌊0.3⌋ = 0, seller 2
    expect((await balance(PLATFORM_FEES)) - feesBefore).toBe(0)
    // Settled like every purchase (src/services/commerce/Settlement.ts): one entry referenced by the transaction.
    expect(receipt.transactionId).toBe(result.transactionId)
    const entries = await server.run(Effect.flatMap(Ledger, (l) => l.entriesByReference(result.transactionId)))
    expect(
      entries.map((e) => [e.id, e.kind, e.postings.find((p) => p.account === walletAccount(k.agentId))?.amount])
    ).toEqual([[receipt.reference, "purchase", -2]])
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
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => invoke(k, body, credential, "priority").then((r) => r.status))
    )
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 402)).toHaveLength(9)
    expect(await balance(walletAccount(k.agentId))).toBe(45)
  })

  it("refusals, each checked against the draft: tampered, another key's, another body's, another method, malformed; a short wallet; per_call only; 404s", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
    const body = { input: { text: "a" } }
    const { challenge } = await strictRefusal(await invoke(k, body), "payment-required")
    const cheaper = Buffer.from(JSON.stringify({ amount: "1", currency: "usd" })).toString("base64url")
    // Any altered parameter breaks the HMAC binding of the id.
    await strictRefusal(await invoke(k, body, credentialFor(challenge, { request: cheaper })), "invalid-challenge")
    await strictRefusal(
      await invoke(k, body, credentialFor(challenge, { expires: new Date(Date.now() + 3_600_000).toISOString() })),
      "invalid-challenge"
    )
    await strictRefusal(await invoke(k, { input: { text: "b" } }, credentialFor(challenge)), "verification-failed")
    await strictRefusal(await invoke(k, body, credentialFor(challenge), "priority"), "verification-failed")
    // The digest covers the bytes: the same JSON written differently is another request.
    const spaced = await fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=standard`), {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json", "payment-authorization": credentialFor(challenge) },
      body: JSON.stringify(body, null, 2)
    })
    await strictRefusal(spaced, "verification-failed")
    await strictRefusal(await invoke(k, body, credentialFor(challenge, { method: "tempo" })), "method-unsupported", 400)
    await strictRefusal(await invoke(k, body, "Payment not*base64"), "malformed-credential")
    await strictRefusal(
      await invoke(k, body, `Payment ${Buffer.from("[]").toString("base64url")}`),
      "malformed-credential"
    )
    const other = await createAgentKey(server.baseUrl, ["commerce:buy"])
    await fund(other.agentId, 10)
    await strictRefusal(await invoke(other, body, credentialFor(challenge)), "invalid-challenge")
    // The owner's wallet is empty: our own problem type, a fresh challenge, no Retry-After.
    const { challenge: fresh, body: unfunded } = await strictRefusal(
      await invoke(k, body, credentialFor(challenge)),
      WALLET_SHORT
    )
    expect(unfunded).toMatchObject({ missingCents: 2 })
    await fund(k.agentId, 2)
    // The scheme name is case-insensitive.
    expect((await invoke(k, body, credentialFor(fresh).replace(/^Payment/, "pAYMENT"))).status).toBe(200)
    expect(await balance(walletAccount(k.agentId))).toBe(0)
    expect(await balance(walletAccount(other.agentId))).toBe(10)

    const monthly = await fetch(url(`${COMMERCE}/services/svc_brand_images/invoke`), {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json" },
      body: "{}"
    })
    expect(monthly.status).toBe(409)
    expect(await monthly.json()).toMatchObject({ type: "NotPayPerRequest", pricingModel: "monthly" })
    const nope = await fetch(url(`${COMMERCE}/services/svc_nope/invoke`), {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json" },
      body: "{}"
    })
    expect(nope.status).toBe(404)
    expect((await invoke(k, body, undefined, "gold")).status).toBe(404)
    const seller = await fetch(url(`${COMMERCE}/services/${SERVICE}/invoke`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}"
    })
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
    expect(await tx.json()).toMatchObject({
      id: paid.transactionId,
      status: "completed",
      priceCents: 2,
      serviceId: SERVICE,
      tierId: "standard",
      role: "buyer"
    })
    expect(paid.receipt.transactionId).toBe(paid.transactionId)

    const patch = await fetch(url(`${COMMERCE}/wallet`), {
      method: "PATCH",
      headers: { ...k.auth, "content-type": "application/json" },
      body: JSON.stringify({ perTransactionLimitCents: 4 })
    })
    expect(patch.status).toBe(200)
    const c2 = parseChallenge((await invoke(k, body, undefined, "priority")).headers.get("www-authenticate")!)
    const refused = await invoke(k, body, credentialFor(c2), "priority")
    expect(refused.status).toBe(403)
    expect(refused.headers.get("payment-receipt")).toBeNull()
    expect(await refused.json()).toMatchObject({
      type: "PolicyViolation",
      policy: "perTransactionLimit",
      limitCents: 4,
      attemptedCents: 5
    })
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
    for (const c of challenges) seenChallengeIds.add(c.id)
    expect(new Set(challenges.map((c) => c.id)).size).toBe(challenges.length)
    await strictRefusal(await invoke(k, body, credentialFor(challenges[0])), "invalid-challenge")
    const newest = await invoke(k, body, credentialFor(challenges[challenges.length - 1]))
    expect(newest.status).toBe(200)
  }, 60_000)

  it("Idempotency-Key: a 402 is never stored, so the paid retry with the same key gets the paid answer, which then replays", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
    await fund(k.agentId, 10)
    const body = { input: { text: "idempotent" } }
    const call = (credential?: string) =>
      fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=standard`), {
        method: "POST",
        headers: {
          ...k.auth,
          "content-type": "application/json",
          "idempotency-key": "pay-once-1",
          ...(credential ? { "payment-authorization": credential } : {})
        },
        body: JSON.stringify(body)
      })
    const first = await call()
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const { challenge } = await strictRefusal(first, "payment-required")
    const paid = await call(credentialFor(challenge))
    expect(paid.status).toBe(200)
    expect(paid.headers.get("idempotent-replayed")).toBeNull()
    const again = await call(credentialFor(challenge))
    expect(again.status).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect((await again.json()).transactionId).toBe((await paid.json()).transactionId)
    expect(await balance(walletAccount(k.agentId))).toBe(8)
  })

  it("the key in X-API-Key and the credential in Authorization: Payment, as the draft places it; the 401 says how", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
    await fund(k.agentId, 10)
    const key = k.auth.authorization.replace(/^Bearer /, "")
    const body = JSON.stringify({ input: { text: "draft placement" } })
    const call = (headers: Record<string, string>) =>
      fetch(url(`${COMMERCE}/services/${SERVICE}/invoke?tier=standard`), {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body
      })
    const { challenge } = await strictRefusal(await call({ "x-api-key": key }), "payment-required")
    expect(challenge.header).toBeUndefined() // the default field: Authorization
    const paid = await call({ "x-api-key": key, authorization: credentialFor(challenge) })
    expect(paid.status).toBe(200)
    expect(paid.headers.get("payment-receipt")).not.toBeNull()
    expect(await balance(walletAccount(k.agentId))).toBe(8)
    // A Payment credential without a key anywhere: 401, and the challenge names X-API-Key.
    const anonymous = await call({ authorization: credentialFor(challenge) })
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toMatch(
      /^Bearer realm="agent-api".*ApiKey realm="agent-api", header="X-API-Key"/
    )
  })

  it("POST /buy with too few credits: our wallet type with a challenge for the purchase; funded, that challenge pays it once; never stored for replay", async () => {
    const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
    const body = JSON.stringify({ serviceId: "svc_translate_pro", tierId: "standard" })
    const buy = (credential?: string) =>
      fetch(url(`${COMMERCE}/buy`), {
        method: "POST",
        headers: {
          ...k.auth,
          "content-type": "application/json",
          "idempotency-key": "buy-short-1",
          ...(credential ? { "payment-authorization": credential } : {})
        },
        body
      })
    const { challenge, body: short } = await strictRefusal(await buy(), WALLET_SHORT)
    expect(short).toMatchObject({
      missingCents: 2,
      howToFund: { checkoutUrl: expect.any(String) },
      challenge: { requestDecoded: { amount: "2", externalId: "svc_translate_pro/standard" } }
    })
    expect(challenge.digest).toBe(`sha-256=:${createHash("sha256").update(body).digest("base64")}:`)
    // Paying before funding: still short, a fresh challenge.
    await strictRefusal(await buy(credentialFor(challenge)), WALLET_SHORT)
    await fund(k.agentId, 2)
    const bought = await buy(credentialFor(challenge))
    expect(bought.status).toBe(201)
    expect(bought.headers.get("idempotent-replayed")).toBeNull()
    expect(bought.headers.get("cache-control")).toBe("private")
    const receipt = JSON.parse(Buffer.from(bought.headers.get("payment-receipt")!, "base64url").toString("utf8"))
    const purchase = await bought.json()
    expect(receipt).toMatchObject({
      status: "success",
      method: "credits",
      challengeId: challenge.id,
      amount: "2",
      transactionId: purchase.transaction.id
    })
    expect(await balance(walletAccount(k.agentId))).toBe(0)
    // The credential is spent: another purchase with it is refused (new key, so no replay).
    await fund(k.agentId, 2)
    const again = await fetch(url(`${COMMERCE}/buy`), {
      method: "POST",
      headers: { ...k.auth, "content-type": "application/json", "payment-authorization": credentialFor(challenge) },
      body
    })
    await strictRefusal(again, "invalid-challenge")
    expect(await balance(walletAccount(k.agentId))).toBe(2)
    // Without a credential /buy still simply charges the wallet.
    expect(
      (
        await fetch(url(`${COMMERCE}/buy`), {
          method: "POST",
          headers: { ...k.auth, "content-type": "application/json" },
          body
        })
      ).status
    ).toBe(201)
  })
})
