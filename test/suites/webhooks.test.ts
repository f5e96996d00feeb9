// Webhooks suite, run on memory and Postgres: configuration and its URL policy, signed delivery
// checked by the `standardwebhooks` library, the retry schedule, disabling after sustained failure,
// leases taken back from a dead worker, concurrent workers, DNS rebinding refused at delivery.
// The address classifier, the transport's limits and the event catalogue are pure and tested once.
import { expect } from "@effect/vitest"
import { Cause, Effect, Layer, Logger, Schema } from "effect"
import { jsonSchemaOf } from "../../src/schema/common.js"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import { lookup as dnsLookup } from "node:dns/promises"
import { randomBytes } from "node:crypto"
import { spawn, spawnSync } from "node:child_process"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, it as vit, vi } from "vitest"
import { classifyAddress, isAllowedAddress } from "../../src/layers/webhooks/addresses.js"
import { makeNodeTransport, type ResolvedAddress, UNREACHABLE } from "../../src/layers/webhooks/transport.js"
import type { EventType } from "../../src/schema/events.js"
import { eventTypes } from "../../src/schema/events.js"
import { eventCatalogue } from "../../src/schema/webhooks.js"
import { atomically, Ids } from "../../src/services/Db.js"
import { Events } from "../../src/services/Events.js"
import { WebhookServicesLive } from "../../src/services/index.js"
import {
  CONNECT_TIMEOUT_MS,
  DELIVERY_TIMEOUT_MS,
  DISABLE_AFTER_MS,
  FAILING_AFTER,
  JITTER,
  LEASE_MS,
  MAX_ATTEMPTS,
  MAX_IN_FLIGHT_PER_ENDPOINT,
  PROBE_DELAYS_MS,
  MAX_RESPONSE_BYTES,
  PREVIOUS_SECRET_GRACE_MS,
  RETRY_DELAYS_MS,
  WebhookStore,
  Webhooks,
  WebhookTransport
} from "../../src/services/Webhooks.js"
import { runWebhookWorker } from "../../src/services/WebhookWorker.js"
import { forEachStorage } from "../fixtures/suite.js"
import { startReceiver } from "../fixtures/webhookReceiver.js"

// ---------------------------------------------------------------------------------------------
// The numbers (docs/webhooks.md)

describe("webhook numbers", () => {
  vit("retry schedule, limits and their documentation agree", () => {
    expect(RETRY_DELAYS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(MAX_ATTEMPTS).toBe(8)
    // The whole schedule spans about a day (27 h 35 min 5 s before jitter).
    expect(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0)).toBe(27 * 3_600_000 + 35 * 60_000 + 5_000)
    expect(JITTER).toBe(0.1)
    expect(DISABLE_AFTER_MS).toBe(24 * 3_600_000)
    expect(LEASE_MS).toBe(60_000)
    expect(DELIVERY_TIMEOUT_MS).toBe(10_000)
    expect(MAX_RESPONSE_BYTES).toBe(65_536)
    expect(PREVIOUS_SECRET_GRACE_MS).toBe(24 * 3_600_000)
    const doc = readFileSync("docs/webhooks.md", "utf8")
    for (const row of ["| 2 | 5 s |", "| 3 | 5 min |", "| 4 | 30 min |", "| 5 | 2 h |", "| 6 | 5 h |", "| 7 | 10 h |", "| 8 | 10 h |"]) expect(doc).toContain(row)
    for (const text of ["±10 %", "24 hours", "60 s", "10 s", "64 KiB"]) expect(doc).toContain(text)
    // Fairness and endpoint health (docs/webhooks.md "Fair delivery", "Endpoint health").
    expect(CONNECT_TIMEOUT_MS).toBe(1_000)
    expect(MAX_IN_FLIGHT_PER_ENDPOINT).toBe(2)
    expect(FAILING_AFTER).toBe(3)
    expect(PROBE_DELAYS_MS).toEqual([5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000])
    for (const text of ["**1 s to connect**", "At most **2** deliveries in flight", "**32**", "**3 attempts in a row**", "5 s, 30 s, 2 min, 10 min, 30 min, then every hour", "**nothing pending is dropped**"]) {
      expect(doc).toContain(text)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Addresses (pure)

describe("webhook address policy", () => {
  vit("classifies loopback, private, link-local, CGNAT, metadata and the embedded-IPv4 forms", () => {
    const table: Array<[string, string]> = [
      ["93.184.216.34", "public"],
      ["8.8.8.8", "public"],
      ["2606:4700:4700::1111", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["169.254.10.1", "link-local"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["100.64.0.1", "cgnat"],
      ["100.127.255.254", "cgnat"],
      ["100.128.0.1", "public"],
      ["169.254.169.254", "metadata"],
      ["fd00:ec2::254", "metadata"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["ff02::1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:a9fe:a9fe", "metadata"],
      ["::ffff:10.0.0.1", "private"],
      ["64:ff9b::a9fe:a9fe", "metadata"],
      ["2002:0a00:0001::1", "private"],
      ["::ffff:8.8.8.8", "public"],
      ["not-an-ip", "invalid"]
    ]
    for (const [address, kind] of table) expect(classifyAddress(address), address).toBe(kind)
    expect(isAllowedAddress("127.0.0.1", true)).toBe(true)
    expect(isAllowedAddress("::1", true)).toBe(true)
    expect(isAllowedAddress("127.0.0.1", false)).toBe(false)
    // The loopback flag opens loopback only.
    for (const a of ["10.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "fd00:ec2::254"]) expect(isAllowedAddress(a, true), a).toBe(false)
  })

  vit("the transport refuses loopback without the flag (a name that resolves to 127.0.0.1 included), http in production", async () => {
    const rx = await startReceiver()
    try {
      const strict = makeNodeTransport({ allowLoopback: false, httpsOnly: false })
      for (const url of [`http://127.0.0.1:${rx.port}/`, `http://localhost:${rx.port}/`, `http://[::1]:${rx.port}/`, "http://2130706433/", "http://0x7f.1/"]) {
        const error = await Effect.runPromise(Effect.flip(strict.check(url)))
        expect(error._tag, url).toBe("InvalidInput")
        expect(error.message, url).toMatch(/loopback/)
      }
      // …and at delivery: nothing reaches the receiver.
      const sent = await Effect.runPromise(strict.send({ url: `http://localhost:${rx.port}/hook`, headers: {}, body: "{}" }))
      expect(sent).toMatchObject({ ok: false, status: null })
      expect(sent.error).toBe(`refused: localhost ${UNREACHABLE}`)
      expect(rx.received).toHaveLength(0)

      const production = makeNodeTransport({ allowLoopback: false, httpsOnly: true })
      expect((await Effect.runPromise(Effect.flip(production.check("http://example.com/hook")))).message).toBe("url must use https")
      const relaxed = makeNodeTransport({ allowLoopback: true, httpsOnly: false })
      await Effect.runPromise(relaxed.check(`http://127.0.0.2:${rx.port}/`))
      for (const [url, message] of [
        ["ftp://example.com/", "url must use https (or http outside production)"],
        ["not a url", "url must be an absolute http(s) URL"],
        ["http://user:pw@example.com/", "url must not contain credentials (user:password@)"],
        ["http://example.com/#x", "url must not contain a fragment"]
      ]) {
        expect((await Effect.runPromise(Effect.flip(relaxed.check(url)))).message, url).toBe(message)
      }
    } finally {
      await rx.close()
    }
  })

  vit("the transport caps the response body, times out, does not follow redirects, reports connection errors", async () => {
    const rx = await startReceiver()
    try {
      const t = makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 400 })
      const post = () => Effect.runPromise(t.send({ url: rx.url, headers: { "content-type": "application/json" }, body: "{}" }))
      // An endless body: reading stops at the cap, long before the timeout.
      let written = 0
      rx.raw = (_req, res) => {
        res.writeHead(500)
        const chunk = Buffer.alloc(16 * 1024, 120)
        const pump = () => {
          while (!res.destroyed && written < 50 * 1024 * 1024 && res.write(chunk)) written += chunk.length
          if (!res.destroyed && written < 50 * 1024 * 1024) res.once("drain", pump)
        }
        pump()
      }
      const capped = await post()
      expect(capped.ok).toBe(false)
      expect(capped.status).toBe(500)
      expect(capped.error).toMatch(/^HTTP 500: x{20}/)
      expect(capped.durationMs).toBeLessThan(400)
      expect(written).toBeLessThan(5 * 1024 * 1024)

      rx.raw = () => {} // never answers
      const slow = await post()
      expect(slow).toMatchObject({ ok: false, status: null, error: "timed out after 400 ms" })
      expect(slow.durationMs).toBeGreaterThanOrEqual(390)

      rx.raw = (_req, res) => res.writeHead(302, { location: "http://169.254.169.254/" }).end()
      const redirect = await post()
      expect(redirect).toMatchObject({ ok: false, status: 302, error: "HTTP 302 (redirects are not followed)" })

      rx.raw = (_req, res) => res.writeHead(200).end("ok")
      expect(await post()).toMatchObject({ ok: true, status: 200, error: null })
    } finally {
      await rx.close()
    }
    const refused = await Effect.runPromise(makeNodeTransport({ allowLoopback: true, httpsOnly: false }).send({ url: rx.url, headers: {}, body: "{}" }))
    expect(refused).toMatchObject({ ok: false, status: null })
    expect(refused.error).toMatch(/ECONNREFUSED/)
  })
})

/** A loopback port whose listener never accepts and whose backlog is full: further SYNs are dropped, as by a black hole. */
const blackHole = async () => {
  const py = spawn("python3", ["-c", "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)"])
  const port = await new Promise<number>((resolve, reject) => {
    py.once("error", reject)
    py.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim())))
  })
  const fillers = Array.from({ length: 4 }, () => connect(port, "127.0.0.1").on("error", () => {}))
  await new Promise((r) => setTimeout(r, 200))
  return {
    port,
    close: () => {
      for (const f of fillers) f.destroy()
      py.kill()
    }
  }
}
const hasPython = spawnSync("python3", ["-c", "pass"]).status === 0

describe("webhook transport connect timeout", () => {
  vit.skipIf(!hasPython)("an address that never completes the handshake costs the connect timeout, not the response timeout", async () => {
    const hole = await blackHole()
    try {
      const t = makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 5_000, connectTimeoutMs: 300 })
      const sent = await Effect.runPromise(t.send({ url: `http://127.0.0.1:${hole.port}/hook`, headers: {}, body: "{}" }))
      expect(sent).toMatchObject({ ok: false, status: null, error: "connect timed out after 300 ms" })
      expect(sent.durationMs).toBeGreaterThanOrEqual(290)
      expect(sent.durationMs).toBeLessThan(2_000)
    } finally {
      hole.close()
    }
  })
})

// ---------------------------------------------------------------------------------------------
// The event catalogue (pure)

describe("event catalogue", () => {
  vit("every event type has a payload schema, a JSON Schema and a section in docs/events.md", () => {
    const doc = readFileSync("docs/events.md", "utf8")
    for (const type of eventTypes) {
      expect(eventCatalogue[type], type).toBeDefined()
      expect(doc, type).toContain(`## \`${type}\``)
      const json = jsonSchemaOf(eventCatalogue[type].schema) as { properties?: Record<string, unknown> }
      expect(Object.keys(json.properties ?? {}).length, type).toBeGreaterThan(0)
      for (const field of Object.keys(json.properties ?? {})) expect(doc, `${type}.${field}`).toContain(`| \`${field}\` |`)
    }
  })

  vit("payloads the services emit today decode with their documented schemas", () => {
    const samples: Array<[EventType, Record<string, unknown>]> = [
      ["build.status_changed", { projectId: "prj_1", status: "queued", previousStatus: null, progressPercent: 0, failureReason: null }],
      ["payment.succeeded", { checkoutSessionId: "cs_1", purpose: "plan", amountCents: 2900, currency: "usd", planId: "pro", credits: 2500, journalEntryId: "je_1" }],
      ["payment.succeeded", { checkoutSessionId: "cs_1", purpose: "plan_renewal", invoiceId: "in_1", planId: "pro", credits: 2500, journalEntryId: "je_2" }],
      ["wallet.recharged", { checkoutSessionId: "cs_2", amountCents: 1000, balanceCents: 3500, journalEntryId: "je_3" }],
      [
        "negotiation.updated",
        { negotiationId: "neg_1", serviceId: "svc_1", tierId: "basic", status: "countered", round: 2, by: "seller", action: "counter", priceCents: 900, automatic: true, agreedPriceCents: null }
      ],
      ["webhook.test", { endpointId: "whep_1", message: "hi" }],
      [
        "transaction.completed",
        { transactionId: "tx_1", serviceId: "svc_1", tierId: "basic", priceCents: 1000, sellerCents: 850, feeCents: 150, role: "buyer", source: "buy", ledgerEntryId: "je_1", negotiationId: null, approvalId: null, sagaId: null, challengeId: null }
      ],
      ["transaction.refunded", { transactionId: "tx_1", amountCents: 1000, sellerCents: 850, feeCents: 150, disputeId: "dsp_1", reason: "accepted" }],
      ["approval.requested", { approvalId: "apr_1", serviceId: "svc_1", tierId: "basic", priceCents: 1000, reason: "manual", expiresAt: "2030-01-01T00:00:00.000Z" }],
      ["review.created", { reviewId: "rev_1", transactionId: "tx_1", serviceId: "svc_1", rating: 5 }],
      ["saga.step_changed", { sagaId: "saga_1", step: "escrow", status: "succeeded", previousStatus: "running", sagaStatus: "running", error: null }],
      ["saga.completed", { sagaId: "saga_1", transactionId: null, amountCents: 1000, serviceId: "svc_1", tierId: "basic", sellerCents: 850, feeCents: 150 }],
      ["saga.compensated", { sagaId: "saga_1", failedStep: "deliver", reason: "timeout", refundedCents: 1000 }],
      ["wallet.recharged", { rechargeId: "rch_1", amountCents: 500, balanceCents: 700, automatic: true }],
      ["wallet.low_balance", { balanceCents: 90, thresholdCents: 100, autoRecharge: true }]
    ]
    for (const [type, data] of samples) expect(Schema.is(eventCatalogue[type].schema)(data), type).toBe(true)
    expect(Schema.is(eventCatalogue["build.status_changed"].schema)({ projectId: "prj_1" })).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------
// The service, on both storage layers

/** Test DNS: names listed here resolve as given; anything else goes to the system resolver. */
const dns = new Map<string, ReadonlyArray<ResolvedAddress>>()
const resolve = async (host: string) => dns.get(host) ?? dnsLookup(host, { all: true, verbatim: true })
// A short response timeout: the dead-endpoint scenario's hung requests free their slots within seconds.
const testTransport = makeNodeTransport({ allowLoopback: true, httpsOnly: false, resolve, timeoutMs: 2_000 })

/** Log lines captured by the disabling test (a Logger writes here). */
const captured: Array<string> = []

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0)
const iso = (ms: number) => new Date(ms).toISOString()
/** Moves the service's clock and the receiver's (`standardwebhooks` checks timestamps against Date.now). */
const at = (ms: number) => Effect.andThen(TestClock.setTime(ms), Effect.sync(() => vi.setSystemTime(ms)))
const newAgent = () => `agt_wh_${randomBytes(6).toString("hex")}`
const receiver = Effect.acquireRelease(
  Effect.promise(() => startReceiver()),
  (rx) => Effect.promise(() => rx.close())
)
const emit = (agentId: string, type: EventType, data: Record<string, unknown>) => atomically(Effect.flatMap(Events, (e) => e.emit(agentId, type, data)))
const recharge = { amountCents: 500, balanceCents: 1500 }
/** The value below which `share` of the samples fall (nearest rank). */
const percentile = (samples: ReadonlyArray<number>, share: number) => [...samples].sort((a, b) => a - b)[Math.ceil(share * samples.length) - 1]
const sleepLive = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))
const build = { projectId: "prj_x", status: "analyzing", previousStatus: "queued", progressPercent: 20, failureReason: null }

/** An agent with an endpoint at the receiver, removed (with its deliveries) when the test ends. */
const endpointFor = (url: string, events?: ReadonlyArray<EventType | "*">) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const agentId = newAgent()
    yield* Effect.addFinalizer(() => webhooks.remove(agentId).pipe(Effect.ignore))
    const put = yield* webhooks.put(agentId, { url, ...(events ? { events } : {}) })
    return { agentId, put, secret: put.secret! }
  })

beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] })
})
afterAll(() => {
  vi.useRealTimers()
})

forEachStorage(
  "webhooks",
  (storage) =>
    WebhookServicesLive.pipe(
      Layer.provideMerge(Events.layer),
      Layer.provideMerge(Layer.succeed(WebhookTransport, testTransport)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    it.effect("PUT creates the endpoint and shows a whsec_ secret once; update, rotate, delete", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const { agentId, put, secret } = yield* endpointFor("http://127.0.0.1:9/hook", ["wallet.recharged", "build.status_changed", "wallet.recharged"])
        expect(put.created).toBe(true)
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32)
        expect(put.webhook).toMatchObject({ url: "http://127.0.0.1:9/hook", events: ["build.status_changed", "wallet.recharged"], enabled: true, status: "active" })
        expect(put.webhook.id).toMatch(/^whep_/)
        const config = yield* webhooks.getConfig(agentId)
        expect(JSON.stringify(config)).not.toContain(secret.slice(6))

        yield* at(T0 + 1000)
        const again = yield* webhooks.put(agentId, { url: "http://127.0.0.1:10/other", events: ["*", "wallet.recharged"], enabled: false })
        expect(again.created).toBe(false)
        expect(again.secret).toBeUndefined()
        expect(again.webhook).toMatchObject({ id: put.webhook.id, url: "http://127.0.0.1:10/other", events: ["*"], enabled: false, status: "paused", updatedAt: iso(T0 + 1000) })

        const rotated = yield* webhooks.rotateSecret(agentId)
        expect(rotated.secret).toMatch(/^whsec_/)
        expect(rotated.secret).not.toBe(secret)
        expect(rotated.webhook.previousSecretExpiresAt).toBe(iso(T0 + 1000 + 24 * 3_600_000))

        yield* webhooks.remove(agentId)
        expect((yield* Effect.flip(webhooks.getConfig(agentId)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(webhooks.remove(agentId)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(webhooks.rotateSecret(agentId)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(webhooks.sendTest(agentId)))._tag).toBe("NotFound")
        const recreated = yield* webhooks.put(agentId, { url: "http://127.0.0.1:9/hook" })
        expect(recreated.created).toBe(true)
        expect(recreated.webhook.id).not.toBe(put.webhook.id)
        expect(recreated.webhook.events).toEqual(["*"])
        expect(recreated.secret).not.toBe(secret)
      })
    )

    it.effect("refuses private, link-local, CGNAT, metadata and unspecified targets at configuration", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        dns.set("metadata.test", [{ address: "169.254.169.254", family: 4 }])
        dns.set("mixed.test", [
          { address: "93.184.216.34", family: 4 },
          { address: "10.1.2.3", family: 4 }
        ])
        dns.set("ula.test", [{ address: "fd00:ec2::254", family: 6 }])
        // Every kind of refusal gets the same words (no oracle of which rule fired): only the host differs.
        const cases: Array<[string, string]> = [
          ["http://10.0.0.1/hook", "10.0.0.1"],
          ["http://172.16.5.4/hook", "172.16.5.4"],
          ["http://192.168.1.1/hook", "192.168.1.1"],
          ["http://[fc00::1]/hook", "fc00::1"],
          ["http://[::ffff:10.0.0.1]/hook", "::ffff:a00:1"],
          ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
          ["http://[fd00:ec2::254]/", "fd00:ec2::254"],
          ["http://metadata.test/", "metadata.test"],
          ["http://ula.test/", "ula.test"],
          ["http://mixed.test/", "mixed.test"],
          ["http://169.254.1.1/", "169.254.1.1"],
          ["http://[fe80::1]/", "fe80::1"],
          ["http://100.64.0.1/", "100.64.0.1"],
          ["http://0.0.0.0:8080/", "0.0.0.0"],
          ["http://does-not-exist.invalid/", "does-not-exist.invalid"]
        ]
        const agentId = newAgent()
        for (const [url, host] of cases) {
          const error = yield* Effect.flip(webhooks.put(agentId, { url }))
          expect(error._tag, url).toBe("InvalidInput")
          expect(error.message, url).toBe(`url refused: ${host} ${UNREACHABLE}`)
          expect((error as { field?: string }).field).toBe("url")
        }
        expect((yield* Effect.flip(webhooks.getConfig(agentId)))._tag).toBe("NotFound")
      })
    )

    it.effect("delivers each subscribed event once, signed per Standard Webhooks (verified by the standardwebhooks library)", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url, ["build.status_changed", "wallet.recharged"])
        rx.secrets = [secret]
        yield* at(T0 + 1000)
        const e1 = yield* emit(agentId, "build.status_changed", build)
        yield* emit(agentId, "transaction.completed", { transactionId: "tx_1", serviceId: "svc_1", role: "buyer", priceCents: 100 })
        const e3 = yield* emit(agentId, "wallet.recharged", recharge)
        yield* emit(newAgent(), "wallet.recharged", recharge)
        yield* at(T0 + 2000)
        yield* webhooks.runOnce
        expect(rx.received.map((r) => r.webhookId).sort()).toEqual([e1.id, e3.id].sort())
        for (const r of rx.received) {
          expect(r.verifiedWith).toEqual([secret])
          expect(r.timestamp).toBe(String(Math.floor((T0 + 2000) / 1000)))
          expect(r.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
          const event = r.webhookId === e1.id ? e1 : e3
          expect(r.payload).toEqual({ id: event.id, type: event.type, timestamp: event.occurredAt, data: event.data })
        }
        yield* webhooks.runOnce
        yield* at(T0 + 3_600_000)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(2)
        expect([...rx.acceptedCounts().values()]).toEqual([1, 1])

        const { data } = yield* webhooks.listAttempts(agentId)
        expect(data).toHaveLength(2)
        for (const a of data) {
          expect(a).toMatchObject({ attempt: 1, status: "succeeded", responseStatus: 204, error: null, nextRetryAt: null, attemptedAt: iso(T0 + 2000) })
          expect(a.durationMs).toBeGreaterThanOrEqual(0)
        }
        expect((yield* webhooks.listAttempts(agentId, { eventId: e3.id })).data.map((a) => a.eventType)).toEqual(["wallet.recharged"])
        expect((yield* webhooks.listAttempts(agentId, { limit: 1 })).data).toHaveLength(1)
        expect(JSON.stringify(data)).not.toContain(secret.slice(6))
        const deliveries = yield* webhooks.listDeliveries(agentId, { limit: 100 })
        expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
          ["succeeded", 1],
          ["succeeded", 1]
        ])
        // Outbox order, as keyset pages: one, then the one after it, then none.
        expect(deliveries.map((d) => d.eventId)).toEqual([e1.id, e3.id])
        const [first] = yield* webhooks.listDeliveries(agentId, { limit: 1 })
        expect(first.id).toBe(deliveries[0].id)
        expect((yield* webhooks.listDeliveries(agentId, { limit: 5, afterId: first.id })).map((d) => d.id)).toEqual([deliveries[1].id])
        expect(yield* webhooks.listDeliveries(agentId, { limit: 5, afterId: deliveries[1].id })).toEqual([])
      })
    )

    it.effect("a receiver failing twice then succeeding gets 3 attempts on the delivery's backoff schedule, one webhook-id", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        // Fewer than FAILING_AFTER failures in a row: the endpoint stays active, the event keeps its own schedule.
        rx.respond = (n) => (n < FAILING_AFTER - 1 ? 500 : 204)
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const event = yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        for (let i = 0; i < FAILING_AFTER - 1; i++) {
          const [last] = (yield* webhooks.listAttempts(agentId)).data
          expect(last).toMatchObject({ attempt: i + 1, status: "failed", responseStatus: 500, error: "HTTP 500: receiver says 500" })
          expect(yield* webhooks.getConfig(agentId)).toMatchObject({ status: "active", consecutiveFailures: i + 1, lastError: "HTTP 500: receiver says 500", pendingCount: 1 })
          const due = Date.parse(last.nextRetryAt!)
          // Not a moment early…
          yield* at(due - 1)
          yield* webhooks.runOnce
          expect((yield* webhooks.listAttempts(agentId)).data).toHaveLength(i + 1)
          // …and on time.
          yield* at(due)
          yield* webhooks.runOnce
        }
        const attempts = [...(yield* webhooks.listAttempts(agentId)).data].reverse()
        expect(attempts.map((a) => [a.attempt, a.status, a.responseStatus])).toEqual([
          [1, "failed", 500],
          [2, "failed", 500],
          [3, "succeeded", 204]
        ])
        expect(attempts[2].nextRetryAt).toBeNull()
        for (let i = 0; i < 2; i++) {
          const gap = Date.parse(attempts[i + 1].attemptedAt) - Date.parse(attempts[i].attemptedAt)
          expect(gap).toBe(Date.parse(attempts[i].nextRetryAt!) - Date.parse(attempts[i].attemptedAt))
          expect(gap).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i] * 0.9)
          expect(gap).toBeLessThanOrEqual(RETRY_DELAYS_MS[i] * 1.1)
        }
        expect(rx.received).toHaveLength(3)
        expect(new Set(rx.received.map((r) => r.webhookId))).toEqual(new Set([event.id]))
        expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
        expect(rx.acceptedCounts().get(event.id)).toBe(1)
        expect((yield* webhooks.listDeliveries(agentId, { limit: 100 })).map((d) => [d.status, d.attempts])).toEqual([["succeeded", 3]])
        expect(yield* webhooks.getConfig(agentId)).toMatchObject({ status: "active", failingSince: null, consecutiveFailures: 0, pendingCount: 0, oldestPendingAt: null, nextAttemptAt: null })
      })
    )

    it.effect("after 3 failures in a row the endpoint is failing: its backlog waits, single probes back off, the first success resumes it oldest first", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        rx.respond = () => 500
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const emitted: Array<string> = []
        for (let i = 0; i < 7; i++) emitted.push((yield* emit(agentId, "wallet.recharged", { ...recharge, balanceCents: i })).id)
        yield* webhooks.runOnce
        // Two at a time (the per-endpoint cap): e1+e2 fail, then e3+e4 fail — the third failure in a row makes it failing.
        expect(rx.received.map((r) => r.webhookId).sort()).toEqual(emitted.slice(0, 4).sort())
        const failing = yield* webhooks.getConfig(agentId)
        expect(failing).toMatchObject({ status: "failing", consecutiveFailures: 4, pendingCount: 7, oldestPendingAt: iso(T0), failingSince: iso(T0) })
        expect(failing.lastError).toBe("HTTP 500: receiver says 500")
        const probeAt = Date.parse(failing.nextAttemptAt!)
        // The 4th failure in a row schedules the 2nd probe delay (30 s ± 10 %).
        expect(probeAt - T0).toBeGreaterThanOrEqual(PROBE_DELAYS_MS[1] * 0.9)
        expect(probeAt - T0).toBeLessThanOrEqual(PROBE_DELAYS_MS[1] * 1.1 + 1000)

        // The backlog (e5…e7 never tried, e1/e2 due again after 5 s) waits for the probe.
        yield* at(probeAt - 1)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(4)
        expect((yield* webhooks.getConfig(agentId)).oldestPendingAgeSeconds).toBe(Math.floor((probeAt - 1 - T0) / 1000))
        // One probe: the oldest event. It fails: the next probe is further out.
        yield* at(probeAt)
        yield* webhooks.runOnce
        expect(rx.received.map((r) => r.webhookId)).toEqual([...rx.received.slice(0, 4).map((r) => r.webhookId), emitted[0]])
        const still = yield* webhooks.getConfig(agentId)
        expect(still).toMatchObject({ status: "failing", consecutiveFailures: 5, pendingCount: 7 })
        const next = Date.parse(still.nextAttemptAt!)
        expect(next - probeAt).toBeGreaterThanOrEqual(PROBE_DELAYS_MS[2] * 0.9)
        expect(next - probeAt).toBeLessThanOrEqual(PROBE_DELAYS_MS[2] * 1.1)
        // The attempt log tells when the waiting event goes next.
        const [probe] = (yield* webhooks.listAttempts(agentId)).data
        expect(probe).toMatchObject({ eventId: emitted[0], attempt: 2, status: "failed", nextRetryAt: still.nextAttemptAt })

        // The receiver is back: the next probe succeeds and the whole backlog follows, oldest first, two at a time.
        rx.respond = () => 204
        yield* at(next)
        yield* webhooks.runOnce
        const accepted = rx.received.filter((r) => r.status === 204).map((r) => r.webhookId)
        expect([...accepted].sort()).toEqual([...emitted].sort())
        expect(accepted[0]).toBe(emitted[0])
        // Per-endpoint order: each event arrives within one place of its outbox position (2 in flight at once).
        accepted.forEach((id, position) => expect(Math.abs(emitted.indexOf(id) - position), id).toBeLessThanOrEqual(1))
        expect([...rx.acceptedCounts().values()].every((n) => n === 1)).toBe(true)
        expect(yield* webhooks.getConfig(agentId)).toMatchObject({ status: "active", consecutiveFailures: 0, failingSince: null, pendingCount: 0, nextAttemptAt: null })
        expect((yield* webhooks.listDeliveries(agentId, { limit: 100 })).every((d) => d.status === "succeeded")).toBe(true)
      })
    )

    it.effect(
      "a dead endpoint (accepts, never answers) with 400 waiting events leaves another endpoint's latency within 2× (p99 of 50); back, its backlog arrives once each",
      () =>
        Effect.gen(function* () {
          const webhooks = yield* Webhooks
          const fast = yield* receiver
          const dead = yield* receiver
          // A hung server: the connection is accepted, no answer ever comes. It counts what it holds at once.
          let hung = 0
          let peakHung = 0
          dead.raw = (req) => {
            hung++
            peakHung = Math.max(peakHung, hung)
            req.socket.once("close", () => hung--)
          }
          // The real clock for this one: the worker's loops and the transport's timeouts run for real.
          vi.useRealTimers()
          yield* Effect.addFinalizer(() => Effect.sync(() => vi.useFakeTimers({ toFake: ["Date"] })))
          yield* TestClock.withLive(
            Effect.scoped(
              Effect.gen(function* () {
                // Created on the real clock too (events older than their endpoint are not sent).
                const b = yield* endpointFor(fast.url)
                const a = yield* endpointFor(dead.url)
                yield* runWebhookWorker(webhooks, { tickMs: 100 })
                /** B's events one at a time: from the commit of each to its arrival. */
                const latencies = (n: number) =>
                  Effect.gen(function* () {
                    const out: Array<number> = []
                    for (let i = 0; i < n; i++) {
                      const before = fast.received.length
                      const started = performance.now()
                      yield* emit(b.agentId, "wallet.recharged", { ...recharge, balanceCents: i })
                      yield* Effect.promise(() => fast.waitFor(before + 1, 10_000))
                      out.push(fast.received[before].receivedAt - started)
                      yield* sleepLive(Math.random() * 20)
                    }
                    return out
                  })
                const alone = yield* latencies(50)
                const backlog = yield* atomically(
                  Effect.forEach(Array.from({ length: 400 }, (_, i) => i), (i) => Effect.flatMap(Events, (e) => e.emit(a.agentId, "wallet.recharged", { ...recharge, balanceCents: i })))
                )
                // Let the dead endpoint take its slots (and fail a few times) before measuring.
                yield* sleepLive(500)
                const withDead = yield* latencies(50)
                const [p99Alone, p99Dead] = [percentile(alone, 0.99), percentile(withDead, 0.99)]
                console.info(`[webhooks fairness] p99 alone ${p99Alone.toFixed(1)} ms, beside a dead endpoint ${p99Dead.toFixed(1)} ms`)
                expect(p99Dead, `p99 ${p99Dead.toFixed(1)} ms beside the dead endpoint vs ${p99Alone.toFixed(1)} ms alone`).toBeLessThanOrEqual(2 * p99Alone)
                // Its share: never more than 2 attempts at once, whatever its backlog.
                expect(peakHung).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ENDPOINT)
                const waiting = yield* webhooks.getConfig(a.agentId)
                expect(waiting.pendingCount).toBe(400)
                expect(waiting.lastError).toMatch(/timed out after 2000 ms/)

                // The endpoint is fixed and its owner turns it back on: the whole backlog arrives.
                dead.raw = undefined
                const t1 = performance.now()
                yield* webhooks.put(a.agentId, { url: dead.url })
                yield* Effect.promise(async () => {
                  const until = performance.now() + 60_000
                  while (dead.acceptedCounts().size < 400 && performance.now() < until) await new Promise((r) => setTimeout(r, 50))
                })
                console.info(`[webhooks fairness] recovered ${dead.acceptedCounts().size} in ${(performance.now() - t1).toFixed(0)} ms`)
                const accepted = dead.acceptedCounts()
                // Each event once as seen by a receiver that dedupes on webhook-id.
                expect([...accepted.keys()].sort()).toEqual(backlog.map((e) => e.id).sort())
                // The receiver has answered the last ones; the worker records those answers just after.
                const settledBy = performance.now() + 10_000
                while ((yield* webhooks.getConfig(a.agentId)).pendingCount > 0 && performance.now() < settledBy) yield* sleepLive(50)
                expect((yield* webhooks.listDeliveries(a.agentId, { limit: 100 })).every((d) => d.status === "succeeded")).toBe(true)
                expect((yield* webhooks.getConfig(a.agentId)).pendingCount).toBe(0)
              })
            )
          )
        }),
      120_000
    )

    it.effect("claims are fair: endpoints round-robin, at most 2 of one endpoint's deliveries in flight", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const store = yield* WebhookStore
        const webhooks = yield* Webhooks
        const x = yield* endpointFor("http://127.0.0.1:9/x")
        const y = yield* endpointFor("http://127.0.0.1:9/y")
        for (let i = 0; i < 10; i++) yield* emit(x.agentId, "wallet.recharged", recharge)
        yield* emit(y.agentId, "wallet.recharged", recharge)
        yield* emit(y.agentId, "wallet.recharged", recharge)
        yield* webhooks.fanOut()
        const ours = new Set([x.agentId, y.agentId])
        const claim = (ms: number, limit: number) =>
          Effect.map(atomically(store.claimDue(iso(ms), iso(ms + LEASE_MS), limit, MAX_IN_FLIGHT_PER_ENDPOINT)), (rows) =>
            rows.filter((d) => ours.has(d.agentId)).map((d) => d.agentId)
          )
        // One at a time: the endpoints alternate although x queued its ten first.
        const one = [yield* claim(T0 + 1, 1), yield* claim(T0 + 2, 1), yield* claim(T0 + 3, 1), yield* claim(T0 + 4, 1)].flat()
        expect(one[0]).not.toBe(one[1])
        expect(one[2]).toBe(one[0])
        expect(one[3]).toBe(one[1])
        // Both at the cap now: nothing more until a lease ends.
        expect(yield* claim(T0 + 5, 10)).toEqual([])
        // Leases over: a claim of 10 takes 2 (expired) rows from each, never more than the cap from x.
        const again = yield* claim(T0 + 4 + LEASE_MS, 10)
        expect(again.filter((a) => a === x.agentId)).toHaveLength(2)
        expect(again.filter((a) => a === y.agentId)).toHaveLength(2)
        expect((yield* webhooks.getConfig(x.agentId)).pendingCount).toBe(10)
      })
    )

    it.effect("filters, paused endpoints, events older than the endpoint; test pings go through any filter", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        const agentId0 = newAgent()
        yield* emit(agentId0, "wallet.recharged", recharge)
        yield* at(T0 + 1000)
        const { agentId, put, secret } = yield* endpointFor(rx.url, ["wallet.recharged"])
        rx.secrets = [secret]
        yield* emit(agentId, "build.status_changed", build)
        // The platform's own notice about this endpoint is never sent to it.
        yield* emit(agentId, "webhook.disabled", { endpointId: put.webhook.id, url: rx.url, reason: "x", failingSince: iso(T0), disabledAt: iso(T0) })
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(0)

        const ping = yield* webhooks.sendTest(agentId)
        expect(ping.type).toBe("webhook.test")
        yield* webhooks.runOnce
        expect(rx.received.map((r) => [r.webhookId, r.payload.type])).toEqual([[ping.eventId, "webhook.test"]])
        expect(rx.received[0].payload.data).toMatchObject({ endpointId: put.webhook.id })

        yield* webhooks.put(agentId, { url: rx.url, events: ["wallet.recharged"], enabled: false })
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(1)
        const conflict = yield* Effect.flip(webhooks.sendTest(agentId))
        expect(conflict).toMatchObject({ _tag: "Conflict", state: "paused" })

        yield* webhooks.put(agentId, { url: rx.url, events: ["wallet.recharged"], enabled: true })
        const later = yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        expect(rx.received.map((r) => r.webhookId)).toEqual([ping.eventId, later.id])
        expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
      })
    )

    it.effect("pausing keeps what is already queued (nothing sent, nothing dropped); enabling sends it", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const queued = yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.fanOut()
        const paused = yield* webhooks.put(agentId, { url: rx.url, enabled: false })
        expect(paused.webhook).toMatchObject({ status: "paused", pendingCount: 1, nextAttemptAt: null })
        yield* emit(agentId, "wallet.recharged", recharge) // while paused: not queued
        yield* at(T0 + 3_600_000)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(0)
        expect((yield* webhooks.listDeliveries(agentId, { limit: 100 })).map((d) => d.status)).toEqual(["pending"])
        yield* webhooks.put(agentId, { url: rx.url, enabled: true })
        yield* webhooks.runOnce
        expect(rx.received.map((r) => r.webhookId)).toEqual([queued.id])
      })
    )

    it.effect("after a rotation deliveries carry both signatures for 24 hours, then only the new one", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url)
        const rotated = yield* webhooks.rotateSecret(agentId)
        rx.secrets = [secret, rotated.secret]
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        expect(rx.received[0].signature.split(" ")).toHaveLength(2)
        expect(rx.received[0].verifiedWith).toEqual([secret, rotated.secret])

        yield* at(T0 + PREVIOUS_SECRET_GRACE_MS + 1000)
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        expect(rx.received[1].signature.split(" ")).toHaveLength(1)
        expect(rx.received[1].verifiedWith).toEqual([rotated.secret])
      })
    )

    it.effect("connects to the address it checked, and refuses at delivery a name that now resolves to a private or metadata address", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        // A name only the checker knows: a delivery proves the connection used the checked address.
        dns.set("pinned.test", [{ address: "127.0.0.1", family: 4 }])
        const pinned = yield* endpointFor(`http://pinned.test:${rx.port}/hook`)
        rx.secrets = [pinned.secret]
        yield* emit(pinned.agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(1)
        expect(rx.received[0].verifiedWith).toEqual([pinned.secret])

        // DNS rebinding: public when configured, private then metadata when delivering.
        dns.set("rebind.test", [{ address: "93.184.216.34", family: 4 }])
        const { agentId } = yield* endpointFor(`http://rebind.test:${rx.port}/hook`)
        dns.set("rebind.test", [{ address: "10.0.0.7", family: 4 }])
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        const [first] = (yield* webhooks.listAttempts(agentId)).data
        expect(first).toMatchObject({ attempt: 1, status: "failed", responseStatus: null, error: `refused: rebind.test ${UNREACHABLE}` })
        dns.set("rebind.test", [{ address: "169.254.169.254", family: 4 }])
        yield* at(Date.parse(first.nextRetryAt!))
        yield* webhooks.runOnce
        const [second] = (yield* webhooks.listAttempts(agentId)).data
        expect(second).toMatchObject({ attempt: 2, status: "failed", responseStatus: null })
        expect(second.error).toBe(`refused: rebind.test ${UNREACHABLE}`)
        expect(rx.received).toHaveLength(1)
      })
    )

    it.effect("an endpoint failing for 24 hours is disabled, its owner told; its pending events are kept and go out when it is turned back on", () =>
      Effect.gen(function* () {
        yield* at(T0)
        captured.length = 0
        const webhooks = yield* Webhooks
        const events = yield* Events
        const rx = yield* receiver
        rx.respond = () => 500
        const { agentId, put, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const event = yield* emit(agentId, "wallet.recharged", recharge)
        const statuses: Array<string> = []
        yield* webhooks.runOnce
        statuses.push((yield* webhooks.getConfig(agentId)).status)
        for (let i = 0; i < 100 && statuses.at(-1) !== "disabled"; i++) {
          const [last] = (yield* webhooks.listAttempts(agentId, { limit: 1 })).data
          yield* at(Date.parse(last.nextRetryAt!))
          yield* webhooks.runOnce
          statuses.push((yield* webhooks.getConfig(agentId)).status)
        }
        const attempts = [...(yield* webhooks.listAttempts(agentId, { limit: 100 })).data].reverse()
        // 2 retries on the event's schedule, failing from the 3rd failure, then probes 5 s, 30 s, 2 min, 10 min, 30 min, hourly.
        expect(statuses.slice(0, 3)).toEqual(["active", "active", "failing"])
        expect(new Set(statuses.slice(2, -1))).toEqual(new Set(["failing"]))
        expect(statuses.at(-1)).toBe("disabled")
        const last = attempts.at(-1)!
        expect(Date.parse(attempts.at(-2)!.attemptedAt) - T0).toBeLessThan(DISABLE_AFTER_MS)
        expect(Date.parse(last.attemptedAt) - T0).toBeGreaterThanOrEqual(DISABLE_AFTER_MS)
        expect(Date.parse(last.attemptedAt) - T0).toBeLessThan(DISABLE_AFTER_MS + 1.1 * PROBE_DELAYS_MS.at(-1)!)
        // Nothing dropped: the event stays pending past MAX_ATTEMPTS while the outage is the endpoint's.
        expect(attempts.length).toBeGreaterThan(MAX_ATTEMPTS)
        // The log read as keyset pages of 7 (all, then the one event's) is the same list, newest first.
        for (const eventId of [undefined, event.id]) {
          const paged: Array<string> = []
          let cursor: string | undefined
          for (let pages = 0; pages < 100; pages++) {
            const page: { readonly data: ReadonlyArray<{ readonly id: string }>; readonly nextCursor: string | null } = yield* webhooks.listAttempts(agentId, { limit: 7, eventId, cursor })
            expect(page.data.length).toBeLessThanOrEqual(7)
            paged.push(...page.data.map((a) => a.id))
            if (page.nextCursor === null) break
            cursor = page.nextCursor
          }
          expect(paged, `paged by ${eventId ?? "agent"}`).toEqual([...attempts].reverse().map((a) => a.id))
        }
        expect((yield* webhooks.listAttempts(agentId, { eventId: "evt_none" })).data).toEqual([])
        const bad = yield* Effect.flip(webhooks.listAttempts(agentId, { cursor: "not-a-cursor" }))
        expect(bad).toMatchObject({ _tag: "InvalidInput", field: "cursor" })
        expect((yield* webhooks.listDeliveries(agentId, { limit: 100 })).map((d) => [d.status, d.attempts])).toEqual([["pending", attempts.length]])

        const config = yield* webhooks.getConfig(agentId)
        expect(config).toMatchObject({ status: "disabled", enabled: true, failingSince: iso(T0), disabledAt: last.attemptedAt, pendingCount: 1, nextAttemptAt: null })
        expect(config.disabledReason).toMatch(/24 hours without a 2xx answer/)
        const [notice] = yield* events.listForAgent(agentId, 1)
        expect(notice.type).toBe("webhook.disabled")
        expect(notice.data).toMatchObject({ endpointId: put.webhook.id, url: rx.url, failingSince: iso(T0) })

        // Disabled: nothing is sent, new events are not queued.
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* at(Date.parse(last.attemptedAt) + 3 * 3_600_000)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(attempts.length)
        expect(rx.received.every((r) => r.webhookId === event.id && r.verifiedWith.length === 1)).toBe(true)
        expect((yield* Effect.flip(webhooks.sendTest(agentId)))).toMatchObject({ _tag: "Conflict", state: "disabled" })

        // The owner fixes the receiver and turns the endpoint back on: the kept event goes out, then the ping.
        const back = yield* webhooks.put(agentId, { url: rx.url })
        expect(back.webhook).toMatchObject({ status: "active", failingSince: null, disabledAt: null, disabledReason: null, consecutiveFailures: 0, pendingCount: 1 })
        rx.respond = () => 204
        const ping = yield* webhooks.sendTest(agentId)
        yield* webhooks.runOnce
        // Both at once (2 in flight per endpoint), so in either order.
        expect(rx.received.slice(attempts.length).map((r) => r.webhookId).sort()).toEqual([event.id, ping.eventId].sort())
        expect(rx.acceptedCounts().get(event.id)).toBe(1)
        expect(captured.join("\n")).not.toContain(secret.slice(6))
        expect(captured.some((l) => l.includes(`endpoint ${put.webhook.id} of agent ${agentId} failing after 3 failed attempts in a row`))).toBe(true)
        expect(captured.some((l) => l.includes(`endpoint ${put.webhook.id} of agent ${agentId} disabled`))).toBe(true)
      }).pipe(
        Effect.provide(
          Logger.layer([
            Logger.make(({ cause, message }) => {
              captured.push(`${[message].flat().map(String).join(" ")} ${cause.reasons.length === 0 ? "" : Cause.pretty(cause)}`)
            })
          ])
        )
      )
    )

    it.effect("a delivery claimed by a worker that died is sent after its lease expires, once; the dead worker's late result is fenced off", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const store = yield* WebhookStore
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const event = yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.fanOut()
        // The "dead" worker: claims (lease until T0 + 60 s) and never reports.
        const claimed = (yield* atomically(store.claimDue(iso(T0), iso(T0 + LEASE_MS), 100, 2))).filter((d) => d.agentId === agentId)
        expect(claimed.map((d) => [d.eventId, d.status, d.attempts, d.leaseExpired])).toEqual([[event.id, "delivering", 1, false]])
        yield* webhooks.runOnce
        yield* at(T0 + LEASE_MS - 1)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(0)
        yield* at(T0 + LEASE_MS)
        yield* webhooks.runOnce
        expect(rx.received.map((r) => r.webhookId)).toEqual([event.id])
        expect(rx.received[0].verifiedWith).toEqual([secret])
        const attempts = (yield* webhooks.listAttempts(agentId)).data
        expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
          [2, "succeeded"],
          [1, "failed"]
        ])
        expect(attempts[1].error).toMatch(/lease expired/)
        // The dead worker wakes up and reports attempt 1: too late, the row has moved on.
        expect(yield* atomically(store.finishDelivery({ ...claimed[0], status: "failed", dueAt: null }, 1))).toBe(false)
        expect((yield* webhooks.listDeliveries(agentId, { limit: 100 })).map((d) => [d.status, d.attempts])).toEqual([["succeeded", 2]])
        yield* at(T0 + 10 * LEASE_MS)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(1)
      })
    )

    it.effect("three workers running at once never send the same attempt twice", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        const { agentId, secret } = yield* endpointFor(rx.url)
        rx.secrets = [secret]
        const emitted = yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => i), (i) => emit(agentId, "wallet.recharged", { ...recharge, balanceCents: i }))
        yield* Effect.all([webhooks.runOnce, webhooks.runOnce, webhooks.runOnce], { concurrency: "unbounded" })
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(30)
        expect(new Set(rx.received.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)))
        expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
        const attempts = (yield* webhooks.listAttempts(agentId, { limit: 100 })).data
        expect(attempts).toHaveLength(30)
        expect(attempts.every((a) => a.attempt === 1 && a.status === "succeeded")).toBe(true)
      })
    )

    it.effect("three workers at once keep at most 2 of one endpoint's deliveries in flight, and deliver each event once", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        let inFlight = 0
        let peak = 0
        const ids: Array<string> = []
        // A receiver that takes 20 ms per request and counts how many it holds at once.
        rx.raw = (req, res) => {
          inFlight++
          peak = Math.max(peak, inFlight)
          ids.push(String(req.headers["webhook-id"]))
          req.resume()
          setTimeout(() => {
            inFlight--
            res.writeHead(204).end()
          }, 20)
        }
        const { agentId } = yield* endpointFor(rx.url)
        const emitted = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => emit(agentId, "wallet.recharged", { ...recharge, balanceCents: i }))
        yield* Effect.all([webhooks.runOnce, webhooks.runOnce, webhooks.runOnce], { concurrency: "unbounded" })
        yield* webhooks.runOnce
        expect(peak).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ENDPOINT)
        expect(peak).toBe(2)
        expect([...ids].sort()).toEqual(emitted.map((e) => e.id).sort())
      })
    )

    it.effect("deleting the endpoint drops its queue and log", () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const rx = yield* receiver
        rx.respond = () => 503
        const { agentId } = yield* endpointFor(rx.url)
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* webhooks.runOnce
        expect((yield* webhooks.listAttempts(agentId)).data).toHaveLength(1)
        yield* webhooks.remove(agentId)
        expect((yield* webhooks.listAttempts(agentId)).data).toHaveLength(0)
        expect(yield* webhooks.listDeliveries(agentId, { limit: 100 })).toHaveLength(0)
        yield* at(T0 + 3_600_000)
        yield* webhooks.runOnce
        expect(rx.received).toHaveLength(1)
      })
    )
  }
)
