// Payments end to end: the fake processor's hosted page (a person's clicks, over HTTP), the
// webhook endpoint, the procedures; then the Stripe layer against a local stub of Stripe.
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import { Effect, Exit, Option, Redacted, Scope } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Payments } from "../../src/services/payments/Payments.js"
import { STRIPE_API_VERSION } from "../../src/layers/payments/stripeFormat.js"
import { createAgentKey, signUp } from "../fixtures/agents.js"
import { freshDatabase, postgresSkipReason } from "../fixtures/db.js"
import { type RuntimeServer, startRuntimeServer } from "../fixtures/runtimeServer.js"
import { STUB_SECRET_KEY, STUB_WEBHOOK_SECRET, startStripeStub, type StripeStub } from "../fixtures/stripeStub.js"

interface TrpcOk<T> {
  result: { data: T }
}
interface TrpcErr {
  error: { message: string; data: { code: string; httpStatus: number; field?: string; type?: string } }
}

const trpc = async <T>(baseUrl: string, path: string, input: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${baseUrl}/api/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(input)
  })
  return { status: res.status, body: (await res.json()) as TrpcOk<T> & TrpcErr }
}
const trpcQuery = async <T>(baseUrl: string, path: string, input: unknown) => {
  const res = await fetch(`${baseUrl}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`)
  return { status: res.status, body: (await res.json()) as TrpcOk<T> & TrpcErr }
}
const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
  redirect: "manual" as const
})
const webhook = (baseUrl: string, payload: string, header: string | undefined) =>
  fetch(`${baseUrl}/api/payments/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(header !== undefined ? { "stripe-signature": header } : {}) },
    body: payload
  })

type Checkout = { checkoutUrl: string; sessionId: string }

describe("payments over HTTP, PAYMENTS=fake", () => {
  let server: RuntimeServer
  beforeAll(async () => {
    server = await startRuntimeServer()
  })
  afterAll(async () => {
    await server?.close()
  })
  const balance = (agentId: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId))))

  it("purchaseAccess → open checkoutUrl (Pay) → Pay → webhook → purchaseStatus paid", async () => {
    const started = await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: 4,
      customerEmail: "casal@example.com",
      customerName: "Ana e João"
    })
    expect(started.status).toBe(200)
    const { checkoutUrl, sessionId } = started.body.result.data
    expect(checkoutUrl).toBe(`${server.baseUrl}/checkout/fake/${sessionId}`)

    const page = await fetch(checkoutUrl)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    const html = await page.text()
    expect(html).toContain("Pay 149.97 USD")
    expect(html).toContain(`action="/checkout/fake/${sessionId}/pay"`)
    expect(html).toContain(`action="/checkout/fake/${sessionId}/cancel"`)
    // form-action also governs the 303 that answers Pay: the return address's origin is allowed
    // besides 'self', so a page opened at another host name than BASE_URL's still completes.
    const csp = page.headers.get("content-security-policy") ?? ""
    expect(csp).toContain(`form-action 'self' ${server.baseUrl};`)
    expect(csp).toContain("default-src 'none'")

    const pending = await trpcQuery<{ status: string }>(server.baseUrl, "publicApi.purchaseStatus", { sessionId })
    expect(pending.body.result.data).toMatchObject({ status: "pending", productId: 4, amountCents: 14997 })

    const paid = await fetch(`${server.baseUrl}/checkout/fake/${sessionId}/pay`, form({ card: "4242 4242 4242 4242" }))
    expect(paid.status).toBe(303)
    // The return address is this server's (BASE_URL), so it is answered as a path: the person stays on their host.
    expect(paid.headers.get("location")).toBe(`/checkout/success?session_id=${sessionId}`)
    const landing = await fetch(`${server.baseUrl}${paid.headers.get("location")!}`)
    expect(await landing.text()).toContain("Payment received")

    const status = await trpcQuery<{ status: string; grantedAt?: string; productId: number }>(
      server.baseUrl,
      "publicApi.purchaseStatus",
      { sessionId }
    )
    expect(status.status).toBe(200)
    expect(status.body.result.data).toMatchObject({ sessionId, status: "paid", productId: 4 })
    expect(status.body.result.data.grantedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    const rest = await fetch(`${server.baseUrl}/api/payments/purchases/${sessionId}`)
    expect(await rest.json()).toMatchObject({ status: "paid", productId: 4 })
    // The page now says so, and Pay again is refused.
    expect(await (await fetch(checkoutUrl)).text()).toContain("This checkout is paid.")
    expect((await fetch(`${server.baseUrl}/checkout/fake/${sessionId}/pay`, form({}))).status).toBe(409)
    // An anonymous checkout's events are its id-holder's, as its page is (there is no account to ask).
    const events = (await (await fetch(`${server.baseUrl}/checkout/fake/${sessionId}/events`)).json()) as {
      data: Array<{ type: string }>
    }
    expect(events.data.map((e) => e.type)).toEqual(["checkout.session.completed"])
  })

  it("purchaseAccess refuses a bad e-mail (BAD_REQUEST naming the field) and an unknown product (NOT_FOUND)", async () => {
    const badEmail = await trpc(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: 1,
      customerEmail: "not-an-email",
      customerName: "X"
    })
    expect(badEmail.status).toBe(400)
    expect(badEmail.body.error.data).toMatchObject({ code: "BAD_REQUEST", field: "customerEmail" })
    const badId = await trpc(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: "1",
      customerEmail: "a@b.co",
      customerName: "X"
    })
    expect(badId.body.error.data).toMatchObject({ code: "BAD_REQUEST", field: "serviceId" })
    const unknown = await trpc(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: 4242,
      customerEmail: "a@b.co",
      customerName: "X"
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.data.code).toBe("NOT_FOUND")
    expect(unknown.body.error.message).toContain("serviceId")
    // Only serviceId is required (spec §4.5): without e-mail and name the checkout still opens.
    const bare = await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", { serviceId: 1 })
    expect(bare.status).toBe(200)
    expect(bare.body.result.data.checkoutUrl).toContain(`/checkout/fake/${bare.body.result.data.sessionId}`)
    const noId = await trpc(server.baseUrl, "publicApi.purchaseAccess", { customerEmail: "a@b.co" })
    expect(noId.status).toBe(400)
    expect(noId.body.error.data).toMatchObject({ code: "BAD_REQUEST", field: "serviceId" })
    const noSession = await trpcQuery(server.baseUrl, "publicApi.purchaseStatus", { sessionId: "cs_fake_doesnotexist" })
    expect(noSession.status).toBe(404)
  })

  it("subscription.createCheckout for Pro → Pay → 2,500 credits in the wallet, plan pro (5 projects); the event replayed over HTTP grants once", async () => {
    const key = await createAgentKey(server.baseUrl, ["catalog:read"])
    const started = await trpc<Checkout & { credits: number; amountCents: number }>(
      server.baseUrl,
      "subscription.createCheckout",
      { planId: "pro" },
      key.auth
    )
    expect(started.status).toBe(200)
    expect(started.body.result.data).toMatchObject({
      planId: "pro",
      credits: 2500,
      amountCents: 9900,
      agentId: key.agentId
    })
    const { checkoutUrl, sessionId } = started.body.result.data
    expect(await (await fetch(checkoutUrl)).text()).toContain("99.00 USD / month</div>")

    expect(await balance(key.agentId)).toBe(0)
    const paid = await fetch(`${server.baseUrl}/checkout/fake/${sessionId}/pay`, form({ card: "4242424242424242" }))
    expect(paid.status).toBe(303)
    expect(await balance(key.agentId)).toBe(2500)
    const session = await fetch(`${server.baseUrl}/api/dashboard/session`, { headers: { cookie: key.cookie } })
    expect(((await session.json()) as { account: { planId: string } }).account.planId).toBe("pro")
    const plan = await server.run(Effect.flatMap(Payments, (p) => p.planOf(key.accountId)))
    expect(plan?.max_projects).toBe(5)

    // The exact signed delivery, replayed through POST /api/payments/webhook: acknowledged, ignored.
    // The signed events and renewals are the subscribing account's only: no credentials or another
    // account's key → 404 (renew without credentials: 401), the owner's key → the list; renewing
    // before the period ends → 409.
    const eventsUrl = `${server.baseUrl}/checkout/fake/${sessionId}/events`
    const anonymous = await fetch(eventsUrl)
    expect(anonymous.status).toBe(404)
    expect(await anonymous.json()).toMatchObject({ type: "NotFound", resource: "checkoutSession" })
    const stranger = await createAgentKey(server.baseUrl, ["catalog:read"])
    expect((await fetch(eventsUrl, { headers: stranger.auth })).status).toBe(404)
    const renewUrl = `${server.baseUrl}/checkout/fake/${sessionId}/renew`
    expect((await fetch(renewUrl, { method: "POST", redirect: "manual" })).status).toBe(401)
    expect((await fetch(renewUrl, { method: "POST", headers: stranger.auth, redirect: "manual" })).status).toBe(404)
    const early = await fetch(renewUrl, { method: "POST", headers: { cookie: key.cookie }, redirect: "manual" })
    expect(early.status).toBe(409)
    expect(await early.json()).toMatchObject({ type: "Conflict", state: "period_not_over" })
    expect(await balance(key.agentId)).toBe(2500)
    const events = (await (await fetch(eventsUrl, { headers: key.auth })).json()) as {
      data: Array<{ eventId: string; type: string; payload: string; signatureHeader: string }>
    }
    expect(events.data.map((e) => e.type)).toEqual(["checkout.session.completed"])
    const [delivery] = events.data
    expect(delivery.signatureHeader).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    for (let i = 0; i < 3; i++) {
      const replay = await webhook(server.baseUrl, delivery.payload, delivery.signatureHeader)
      expect(replay.status).toBe(200)
      expect(await replay.json()).toMatchObject({ received: true, eventId: delivery.eventId, duplicate: true })
    }
    expect(await balance(key.agentId)).toBe(2500)
    const entries = await server.run(Effect.flatMap(Ledger, (l) => l.entriesByReference(sessionId)))
    expect(entries).toHaveLength(1)

    // Tampered body, or no signature: 400 with the one error body.
    const tampered = await webhook(
      server.baseUrl,
      delivery.payload.replace('"amount_total":9900', '"amount_total":1'),
      delivery.signatureHeader
    )
    expect(tampered.status).toBe(400)
    expect(await tampered.json()).toMatchObject({ type: "InvalidSignature" })
    expect((await webhook(server.baseUrl, delivery.payload, undefined)).status).toBe(400)
  })

  it("a dashboard session names the credited agent; without credentials it is 401", async () => {
    const owner = await signUp(server.baseUrl)
    const agent = (await (
      await fetch(`${server.baseUrl}/api/dashboard/agents`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: owner.cookie },
        body: JSON.stringify({ name: "wallet-agent" })
      })
    ).json()) as { id: string }
    const anonymous = await trpc(server.baseUrl, "subscription.createCheckout", { planId: "starter" })
    expect(anonymous.status).toBe(401)
    const unnamed = await trpc(
      server.baseUrl,
      "subscription.createCheckout",
      { planId: "starter" },
      { cookie: owner.cookie }
    )
    expect(unnamed.body.error.data).toMatchObject({ code: "BAD_REQUEST", field: "agentId" })
    const badPlan = await trpc(
      server.baseUrl,
      "subscription.createCheckout",
      { planId: "gold", agentId: agent.id },
      { cookie: owner.cookie }
    )
    expect(badPlan.body.error.data).toMatchObject({ code: "BAD_REQUEST", field: "planId" })
    const named = await trpc<Checkout>(
      server.baseUrl,
      "subscription.createCheckout",
      { planId: "starter", agentId: agent.id },
      { cookie: owner.cookie }
    )
    expect(named.status).toBe(200)
    await fetch(`${server.baseUrl}/checkout/fake/${named.body.result.data.sessionId}/pay`, form({}))
    expect(await balance(agent.id)).toBe(500)
  })

  it("?fail=card_declined and the declining test card fail the payment; Cancel expires the checkout", async () => {
    const start = async () =>
      (
        await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", {
          serviceId: 1,
          customerEmail: "x@y.co",
          customerName: "X"
        })
      ).body.result.data
    const status = async (sessionId: string) =>
      (
        await trpcQuery<{ status: string; failureReason?: string }>(server.baseUrl, "publicApi.purchaseStatus", {
          sessionId
        })
      ).body.result.data

    const a = await start()
    const declined = await fetch(`${server.baseUrl}/checkout/fake/${a.sessionId}/pay?fail=card_declined`, form({}))
    expect(declined.status).toBe(303)
    expect(declined.headers.get("location")).toBe(`/checkout/cancelled?session_id=${a.sessionId}`)
    expect(await status(a.sessionId)).toMatchObject({ status: "failed", failureReason: "payment_failed" })
    expect(await (await fetch(a.checkoutUrl)).text()).toContain("The payment failed (card_declined)")

    const b = await start()
    await fetch(`${server.baseUrl}/checkout/fake/${b.sessionId}/pay`, form({ card: "4000000000009995" }))
    expect((await status(b.sessionId)).status).toBe("failed")

    const c = await start()
    const cancelled = await fetch(`${server.baseUrl}/checkout/fake/${c.sessionId}/cancel`, form({}))
    expect(cancelled.status).toBe(303)
    expect((await status(c.sessionId)).status).toBe("expired")
    expect(await (await fetch(`${server.baseUrl}${cancelled.headers.get("location")!}`)).text()).toContain(
      "expired or was cancelled"
    )

    expect((await fetch(`${server.baseUrl}/checkout/fake/cs_fake_nope`)).status).toBe(404)
  })
})

describe.skipIf(postgresSkipReason !== undefined)("fake checkout sessions survive a restart (Postgres)", () => {
  it("a checkout opened before a restart is paid after it", async () => {
    const scope = Effect.runSync(Scope.make())
    const db = await Effect.runPromise(Scope.provide(freshDatabase, scope))
    const config = { databaseUrl: Option.some(Redacted.make(db.url)) }
    try {
      const first = await startRuntimeServer({ storage: "postgres", config })
      const started = await trpc<Checkout>(first.baseUrl, "publicApi.purchaseAccess", {
        serviceId: 2,
        customerEmail: "r@s.co",
        customerName: "R"
      })
      const { sessionId } = started.body.result.data
      await first.close()
      const second = await startRuntimeServer({ storage: "postgres", config })
      try {
        expect((await fetch(`${second.baseUrl}/checkout/fake/${sessionId}`)).status).toBe(200)
        expect((await fetch(`${second.baseUrl}/checkout/fake/${sessionId}/pay`, form({}))).status).toBe(303)
        const status = await trpcQuery<{ status: string }>(second.baseUrl, "publicApi.purchaseStatus", { sessionId })
        expect(status.body.result.data.status).toBe("paid")
      } finally {
        await second.close()
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("payments over HTTP, PAYMENTS=stripe against a local Stripe stub", () => {
  let stub: StripeStub
  let server: RuntimeServer
  beforeAll(async () => {
    stub = await startStripeStub()
    server = await startRuntimeServer({
      config: {
        payments: "stripe",
        stripeSecretKey: Option.some(Redacted.make(STUB_SECRET_KEY)),
        stripeWebhookSecret: Option.some(Redacted.make(STUB_WEBHOOK_SECRET)),
        stripeApiBase: Option.some(stub.baseUrl)
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await stub?.close()
  })
  const balance = (agentId: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId))))

  it("createCheckout for Pro: a subscription session at Stripe (pinned version, idempotency key), then the signed completion grants 2,500 credits once", async () => {
    const key = await createAgentKey(server.baseUrl, ["catalog:read"])
    const started = await trpc<Checkout>(
      server.baseUrl,
      "subscription.createCheckout",
      { planId: "pro" },
      { ...key.auth, "idempotency-key": "plan-pro-1" }
    )
    expect(started.status).toBe(200)
    const { checkoutUrl, sessionId } = started.body.result.data
    expect(sessionId).toMatch(/^cs_test_/)
    expect(checkoutUrl).toBe(`https://checkout.stripe.test/c/pay/${sessionId}`)

    const request = stub.requests.find((r) => r.method === "POST" && r.path === "/v1/checkout/sessions")!
    expect(request.headers["stripe-version"]).toBe(STRIPE_API_VERSION)
    expect(request.headers["idempotency-key"]).toMatch(/^ck_[0-9a-f]{40}$/)
    expect(request.body).toMatchObject({
      mode: "subscription",
      line_items: [
        { quantity: "1", price_data: { currency: "usd", unit_amount: "9900", recurring: { interval: "month" } } }
      ],
      metadata: { purpose: "plan", plan_id: "pro", agent_id: key.agentId, account_id: key.accountId },
      subscription_data: { metadata: { purpose: "plan" } },
      success_url: `${server.baseUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`
    })

    const event = stub.event(sessionId, "checkout.session.completed")
    const ack = await webhook(server.baseUrl, event.payload, event.header)
    expect(ack.status).toBe(200)
    expect(await ack.json()).toMatchObject({ eventId: event.eventId, duplicate: false })
    expect(await balance(key.agentId)).toBe(2500)
    expect((await server.run(Effect.flatMap(Payments, (p) => p.planOf(key.accountId))))?.id).toBe("pro")

    // Replayed: 200 and ignored; the ledger counts the grant once.
    const replay = await webhook(server.baseUrl, event.payload, event.header)
    expect(replay.status).toBe(200)
    expect(await replay.json()).toMatchObject({ duplicate: true })
    expect(await balance(key.agentId)).toBe(2500)
    expect(await server.run(Effect.flatMap(Ledger, (l) => l.entriesByReference(sessionId)))).toHaveLength(1)

    // The session as Stripe has it now.
    const session = await server.run(Effect.flatMap(Payments, (p) => p.processorSession(sessionId)))
    expect(session).toMatchObject({
      id: sessionId,
      status: "complete",
      paymentStatus: "paid",
      amountTotal: 9900,
      mode: "subscription"
    })
    expect(session.subscriptionId).toMatch(/^sub_test_/)
    const missing = await server.run(
      Effect.flip(Effect.flatMap(Payments, (p) => p.processorSession("cs_test_missing")))
    )
    expect(missing._tag).toBe("NotFound")
  })

  it("the signature check accepts SDK-made headers and rejects tampered, stale and wrong-secret ones", async () => {
    const started = await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: 3,
      customerEmail: "s@t.co",
      customerName: "S"
    })
    const { sessionId } = started.body.result.data
    const now = Math.floor(Date.now() / 1000)

    const stale = stub.event(sessionId, "checkout.session.completed", { timestamp: now - 301 })
    const staleRes = await webhook(server.baseUrl, stale.payload, stale.header)
    expect(staleRes.status).toBe(400)
    expect(await staleRes.json()).toMatchObject({
      type: "InvalidSignature",
      message: expect.stringContaining("tolerance")
    })
    const wrong = stub.event(sessionId, "checkout.session.completed", { secret: "whsec_someone_else" })
    expect((await webhook(server.baseUrl, wrong.payload, wrong.header)).status).toBe(400)
    const good = stub.event(sessionId, "checkout.session.completed")
    const tampered = good.payload.replace(`"status": "complete"`, `"status": "complete" `)
    expect(tampered).not.toBe(good.payload)
    expect((await webhook(server.baseUrl, tampered, good.header)).status).toBe(400)
    // Nothing was granted by the refused ones.
    expect(
      (await trpcQuery<{ status: string }>(server.baseUrl, "publicApi.purchaseStatus", { sessionId })).body.result.data
        .status
    ).toBe("pending")

    const ok = await webhook(server.baseUrl, good.payload, good.header)
    expect(ok.status).toBe(200)
    const status = await trpcQuery<{ status: string; grantedAt?: string }>(server.baseUrl, "publicApi.purchaseStatus", {
      sessionId
    })
    expect(status.body.result.data).toMatchObject({ status: "paid", productId: 3 })
    expect(status.body.result.data.grantedAt).toBeDefined()
  })

  it("an expired session expires the purchase; a refusing processor is a 502; the fake page is off", async () => {
    const started = await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: 1,
      customerEmail: "e@f.co",
      customerName: "E"
    })
    const { sessionId } = started.body.result.data
    const expired = stub.event(sessionId, "checkout.session.expired")
    expect((await webhook(server.baseUrl, expired.payload, expired.header)).status).toBe(200)
    expect(
      (await trpcQuery<{ status: string }>(server.baseUrl, "publicApi.purchaseStatus", { sessionId })).body.result.data
        .status
    ).toBe("expired")

    stub.failNext(400, {
      type: "invalid_request_error",
      code: "amount_too_small",
      message: "Amount must be at least $0.50 usd"
    })
    const refused = await trpc(server.baseUrl, "publicApi.purchaseAccess", {
      serviceId: 1,
      customerEmail: "e@f.co",
      customerName: "E"
    })
    expect(refused.status).toBe(502)
    expect(refused.body.error.message).toContain("amount_too_small")

    expect((await fetch(`${server.baseUrl}/checkout/fake/${sessionId}`)).status).toBe(404)
  })
})

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

describe.skipIf(
  skipUnlessCi(existsSync(CHROMIUM) ? undefined : `no chromium at ${CHROMIUM} (set CHROMIUM_PATH)`) !== undefined
)("the fake checkout page in a real browser (chromium)", () => {
  it("a person opens the checkout address, clicks Pay, lands on the success page; the purchase is paid", async () => {
    requirePrerequisite(existsSync(CHROMIUM) ? undefined : `no chromium at ${CHROMIUM} (set CHROMIUM_PATH)`)
    const server = await startRuntimeServer()
    const profile = mkdtempSync(join(tmpdir(), "chromium-checkout-"))
    const { chromium } = await import("playwright-core")
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        "--disable-quic"
      ]
    })
    try {
      const started = await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", {
        serviceId: 3,
        customerEmail: "browser@example.com",
        customerName: "Browser"
      })
      const { checkoutUrl, sessionId } = started.body.result.data
      const page = await context.newPage()
      const problems: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text())
      })
      await page.goto(checkoutUrl)
      expect(await page.textContent("h1")).toBe("Guia Completo dos 4 Ciclos")
      await page.getByRole("button", { name: /^Pay 19\.97 USD$/ }).click()
      await page.waitForURL(`${server.baseUrl}/checkout/success?session_id=${sessionId}`)
      expect(await page.getAttribute("[data-status]", "data-status")).toBe("paid")
      expect(await page.textContent(".status")).toContain("Payment received")
      expect(problems).toEqual([]) // no CSP violations
      const status = await trpcQuery<{ status: string }>(server.baseUrl, "publicApi.purchaseStatus", { sessionId })
      expect(status.body.result.data.status).toBe("paid")

      // A declining card chosen in the page's select: back to the cancel page, purchase failed.
      const second = (
        await trpc<Checkout>(server.baseUrl, "publicApi.purchaseAccess", {
          serviceId: 3,
          customerEmail: "b@example.com",
          customerName: "B"
        })
      ).body.result.data
      await page.goto(second.checkoutUrl)
      await page.selectOption("#card", "4000000000000002")
      await page.getByRole("button", { name: /^Pay/ }).click()
      await page.waitForURL(`${server.baseUrl}/checkout/cancelled?session_id=${second.sessionId}`)
      expect(await page.getAttribute("[data-status]", "data-status")).toBe("failed")
    } finally {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
      await server.close()
    }
  }, 60_000)
})
