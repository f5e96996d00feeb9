// Webhook configuration on every storage: an endpoint is created, updated, rotated, paused and
// deleted; its URL policy (private, metadata, DNS rebinding) holds at configuration and at delivery;
// filters and pings decide what is queued.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { UNREACHABLE } from "../../src/layers/webhooks/WebhookTransport.node.js"
import { PREVIOUS_SECRET_GRACE_MS } from "../../src/services/webhooks/policy.js"
import { WebhookDelivery } from "../../src/services/webhooks/WebhookDelivery.js"
import { Webhooks } from "../../src/services/webhooks/Webhooks.js"
import {
  dns,
  T0,
  iso,
  at,
  newAgent,
  receiver,
  emit,
  recharge,
  build,
  endpointFor,
  webhookSuite
} from "../fixtures/webhooks.js"

webhookSuite("webhook configuration", (it) => {
  it.effect("PUT creates the endpoint and shows a whsec_ secret once; update, rotate, delete", () =>
    Effect.gen(function* () {
      yield* at(T0)
      const webhooks = yield* Webhooks
      const { agentId, put, secret } = yield* endpointFor("http://127.0.0.1:9/hook", [
        "wallet.recharged",
        "build.status_changed",
        "wallet.recharged"
      ])
      expect(put.created).toBe(true)
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32)
      expect(put.webhook).toMatchObject({
        url: "http://127.0.0.1:9/hook",
        events: ["build.status_changed", "wallet.recharged"],
        enabled: true,
        status: "active"
      })
      expect(put.webhook.id).toMatch(/^whep_/)
      const config = yield* webhooks.getConfig(agentId)
      expect(JSON.stringify(config)).not.toContain(secret.slice(6))

      yield* at(T0 + 1000)
      const again = yield* webhooks.put(agentId, {
        url: "http://127.0.0.1:10/other",
        events: ["*", "wallet.recharged"],
        enabled: false
      })
      expect(again.created).toBe(false)
      expect(again.secret).toBeUndefined()
      expect(again.webhook).toMatchObject({
        id: put.webhook.id,
        url: "http://127.0.0.1:10/other",
        events: ["*"],
        enabled: false,
        status: "paused",
        updatedAt: iso(T0 + 1000)
      })

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

  it.effect("filters, paused endpoints, events older than the endpoint; test pings go through any filter", () =>
    Effect.gen(function* () {
      yield* at(T0)
      const webhooks = yield* Webhooks
      const delivery = yield* WebhookDelivery
      const rx = yield* receiver
      const agentId0 = newAgent()
      yield* emit(agentId0, "wallet.recharged", recharge)
      yield* at(T0 + 1000)
      const { agentId, put, secret } = yield* endpointFor(rx.url, ["wallet.recharged"])
      rx.secrets = [secret]
      yield* emit(agentId, "build.status_changed", build)
      // The platform's own notice about this endpoint is never sent to it.
      yield* emit(agentId, "webhook.disabled", {
        endpointId: put.webhook.id,
        url: rx.url,
        reason: "x",
        failingSince: iso(T0),
        disabledAt: iso(T0)
      })
      yield* delivery.runOnce
      expect(rx.received).toHaveLength(0)

      const ping = yield* webhooks.sendTest(agentId)
      expect(ping.type).toBe("webhook.test")
      yield* delivery.runOnce
      expect(rx.received.map((r) => [r.webhookId, r.payload.type])).toEqual([[ping.eventId, "webhook.test"]])
      expect(rx.received[0].payload.data).toMatchObject({ endpointId: put.webhook.id })

      yield* webhooks.put(agentId, { url: rx.url, events: ["wallet.recharged"], enabled: false })
      yield* emit(agentId, "wallet.recharged", recharge)
      yield* delivery.runOnce
      expect(rx.received).toHaveLength(1)
      const conflict = yield* Effect.flip(webhooks.sendTest(agentId))
      expect(conflict).toMatchObject({ _tag: "Conflict", state: "paused" })

      yield* webhooks.put(agentId, { url: rx.url, events: ["wallet.recharged"], enabled: true })
      const later = yield* emit(agentId, "wallet.recharged", recharge)
      yield* delivery.runOnce
      expect(rx.received.map((r) => r.webhookId)).toEqual([ping.eventId, later.id])
      expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true)
    })
  )

  it.effect("pausing keeps what is already queued (nothing sent, nothing dropped); enabling sends it", () =>
    Effect.gen(function* () {
      yield* at(T0)
      const webhooks = yield* Webhooks
      const delivery = yield* WebhookDelivery
      const rx = yield* receiver
      const { agentId, secret } = yield* endpointFor(rx.url)
      rx.secrets = [secret]
      const queued = yield* emit(agentId, "wallet.recharged", recharge)
      yield* delivery.fanOut()
      const paused = yield* webhooks.put(agentId, { url: rx.url, enabled: false })
      expect(paused.webhook).toMatchObject({ status: "paused", pendingCount: 1, nextAttemptAt: null })
      yield* emit(agentId, "wallet.recharged", recharge) // while paused: not queued
      yield* at(T0 + 3_600_000)
      yield* delivery.runOnce
      expect(rx.received).toHaveLength(0)
      expect((yield* delivery.listDeliveries(agentId, { limit: 100 })).map((d) => d.status)).toEqual(["pending"])
      yield* webhooks.put(agentId, { url: rx.url, enabled: true })
      yield* delivery.runOnce
      expect(rx.received.map((r) => r.webhookId)).toEqual([queued.id])
    })
  )

  it.effect("after a rotation deliveries carry both signatures for 24 hours, then only the new one", () =>
    Effect.gen(function* () {
      yield* at(T0)
      const webhooks = yield* Webhooks
      const delivery = yield* WebhookDelivery
      const rx = yield* receiver
      const { agentId, secret } = yield* endpointFor(rx.url)
      const rotated = yield* webhooks.rotateSecret(agentId)
      rx.secrets = [secret, rotated.secret]
      yield* emit(agentId, "wallet.recharged", recharge)
      yield* delivery.runOnce
      expect(rx.received[0].signature.split(" ")).toHaveLength(2)
      expect(rx.received[0].verifiedWith).toEqual([secret, rotated.secret])

      yield* at(T0 + PREVIOUS_SECRET_GRACE_MS + 1000)
      yield* emit(agentId, "wallet.recharged", recharge)
      yield* delivery.runOnce
      expect(rx.received[1].signature.split(" ")).toHaveLength(1)
      expect(rx.received[1].verifiedWith).toEqual([rotated.secret])
    })
  )

  it.effect(
    "connects to the address it checked, and refuses at delivery a name that now resolves to a private or metadata address",
    () =>
      Effect.gen(function* () {
        yield* at(T0)
        const webhooks = yield* Webhooks
        const delivery = yield* WebhookDelivery
        const rx = yield* receiver
        // A name only the checker knows: a delivery proves the connection used the checked address.
        dns.set("pinned.test", [{ address: "127.0.0.1", family: 4 }])
        const pinned = yield* endpointFor(`http://pinned.test:${rx.port}/hook`)
        rx.secrets = [pinned.secret]
        yield* emit(pinned.agentId, "wallet.recharged", recharge)
        yield* delivery.runOnce
        expect(rx.received).toHaveLength(1)
        expect(rx.received[0].verifiedWith).toEqual([pinned.secret])

        // DNS rebinding: public when configured, private then metadata when delivering.
        dns.set("rebind.test", [{ address: "93.184.216.34", family: 4 }])
        const { agentId } = yield* endpointFor(`http://rebind.test:${rx.port}/hook`)
        dns.set("rebind.test", [{ address: "10.0.0.7", family: 4 }])
        yield* emit(agentId, "wallet.recharged", recharge)
        yield* delivery.runOnce
        const [first] = (yield* webhooks.listAttempts(agentId)).data
        expect(first).toMatchObject({
          attempt: 1,
          status: "failed",
          responseStatus: null,
          error: `refused: rebind.test ${UNREACHABLE}`
        })
        dns.set("rebind.test", [{ address: "169.254.169.254", family: 4 }])
        yield* at(Date.parse(first.nextRetryAt!))
        yield* delivery.runOnce
        const [second] = (yield* webhooks.listAttempts(agentId)).data
        expect(second).toMatchObject({ attempt: 2, status: "failed", responseStatus: null })
        expect(second.error).toBe(`refused: rebind.test ${UNREACHABLE}`)
        expect(rx.received).toHaveLength(1)
      })
  )

  it.effect("deleting the endpoint drops its queue and log", () =>
    Effect.gen(function* () {
      yield* at(T0)
      const webhooks = yield* Webhooks
      const delivery = yield* WebhookDelivery
      const rx = yield* receiver
      rx.respond = () => 503
      const { agentId } = yield* endpointFor(rx.url)
      yield* emit(agentId, "wallet.recharged", recharge)
      yield* delivery.runOnce
      expect((yield* webhooks.listAttempts(agentId)).data).toHaveLength(1)
      yield* webhooks.remove(agentId)
      expect((yield* webhooks.listAttempts(agentId)).data).toHaveLength(0)
      expect(yield* delivery.listDeliveries(agentId, { limit: 100 })).toHaveLength(0)
      yield* at(T0 + 3_600_000)
      yield* delivery.runOnce
      expect(rx.received).toHaveLength(1)
    })
  )
})
