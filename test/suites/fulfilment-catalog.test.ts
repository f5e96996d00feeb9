// What a seller is promised about its service's fulfilment, on every storage: a published service
// is fulfilled by its seller (pull) unless it asks for push; nobody but the platform's own sellers
// can have the platform make deliveries up (simulated); a push endpoint passes the webhooks' address
// guard, its signing secret is shown once and never listed; rotating makes a new one.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import { PublishServiceBody } from "../../src/schema/commerce/services.js"
import { Agent } from "../../src/schema/keys/keys.js"
import { CommerceSeedLive, PLATFORM_SELLERS_ACCOUNT } from "../../src/layers/seed/seedCommerce.js"
import { makeNodeTransport } from "../../src/layers/webhooks/WebhookTransport.node.js"
import { Catalog } from "../../src/services/commerce/Catalog.js"
import { Publishing } from "../../src/services/commerce/Publishing.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Ids } from "../../src/services/platform/Db.js"
import { WebhookTransport } from "../../src/services/webhooks/WebhookTransport.js"
import { agentCaller, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

/** Names the test controls: one public, one that resolves into a private network. */
const DNS: Record<string, ReadonlyArray<{ address: string; family: number }>> = {
  "seller.example": [{ address: "93.184.216.34", family: 4 }],
  "inside.example": [{ address: "10.1.2.3", family: 4 }]
}
const transport = Layer.succeed(
  WebhookTransport,
  makeNodeTransport({
    allowLoopback: false,
    httpsOnly: true,
    resolve: async (host) => DNS[host] ?? []
  })
)

const body = (fulfilment?: PublishServiceBody["fulfilment"]) =>
  ({ ...serviceBody("Fulfilled", [tier("unit", 100)]), fulfilment }) as unknown as PublishServiceBody

forEachStorage(
  "fulfilment in the catalogue",
  (storage) =>
    Layer.mergeAll(Publishing.layer, Catalog.layer).pipe(
      Layer.provideMerge(CommerceSeedLive),
      Layer.provideMerge(transport),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    const agent = (accountId?: string) =>
      Effect.gen(function* () {
        const agentId = yield* Effect.flatMap(Ids, (ids) => ids.make("agt"))
        const account = accountId ?? `acct_${agentId}`
        const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        const keys = yield* KeysStore
        if (accountId === undefined) {
          yield* keys.insertAccount({
            id: account,
            email: `${agentId}@sellers.invalid`,
            name: "seller",
            passwordHash: "disabled",
            planId: null,
            createdAt
          })
        }
        yield* keys.insertAgent(
          Agent.make({ id: agentId, accountId: account, name: "seller", organization: null, createdAt })
        )
        return agentCaller(agentId, account)
      })

    it.effect("an agent's service is fulfilled by its seller (pull) unless it asks for push", () =>
      Effect.gen(function* () {
        const publishing = yield* Publishing
        const catalog = yield* Catalog
        const seller = yield* agent()
        // The body as a seller sends it, without `fulfilment`: decoded, it is pull.
        const { fulfilment: _none, ...sent } = serviceBody("Plain", [tier("unit", 100)])
        const plain = yield* publishing.publish(seller, Schema.decodeUnknownSync(PublishServiceBody)(sent))
        expect(plain.fulfilment).toEqual({ mode: "pull" })
        expect(plain).not.toHaveProperty("fulfilmentSecret")
        expect((yield* catalog.getService(plain.id)).fulfilment).toEqual({ mode: "pull" })
      })
    )

    it.effect("only the platform's own sellers may be simulated: anyone else gets 400 naming fulfilment.mode", () =>
      Effect.gen(function* () {
        const publishing = yield* Publishing
        const catalog = yield* Catalog
        const seller = yield* agent()
        const refused = yield* Effect.flip(publishing.publish(seller, body({ mode: "simulated" })))
        expect(refused).toMatchObject({ _tag: "InvalidInput", field: "fulfilment.mode" })
        // Nor can a published service be switched to simulated afterwards.
        const mine = yield* publishing.publish(seller, body({ mode: "pull" }))
        const switched = yield* Effect.flip(publishing.update(seller, mine.id, { fulfilment: { mode: "simulated" } }))
        expect(switched).toMatchObject({ _tag: "InvalidInput", field: "fulfilment.mode" })
        expect((yield* catalog.getService(mine.id)).fulfilment).toEqual({ mode: "pull" })
        // A platform seller may; the seed's services are the platform's, simulated.
        const platform = yield* agent(PLATFORM_SELLERS_ACCOUNT)
        expect((yield* publishing.publish(platform, body({ mode: "simulated" }))).fulfilment).toEqual({
          mode: "simulated"
        })
        expect((yield* catalog.getService("svc_image_gen")).fulfilment).toEqual({ mode: "simulated" })
      })
    )

    it.effect("push: the url is required, checked like a webhook endpoint, and only push takes one", () =>
      Effect.gen(function* () {
        const publishing = yield* Publishing
        const seller = yield* agent()
        const refusals = [
          body({ mode: "push" }),
          body({ mode: "push", url: "https://inside.example/orders" }),
          body({ mode: "push", url: "https://10.0.0.7/orders" }),
          body({ mode: "push", url: "http://seller.example/orders" }),
          body({ mode: "pull", url: "https://seller.example/orders" })
        ]
        for (const b of refusals) {
          const refused = yield* Effect.flip(publishing.publish(seller, b))
          expect(refused).toMatchObject({ _tag: "InvalidInput", field: "fulfilment.url" })
        }
        const mine = yield* publishing.publish(seller, body({ mode: "pull" }))
        const moved = yield* Effect.flip(
          publishing.update(seller, mine.id, { fulfilment: { mode: "push", url: "https://inside.example/x" } })
        )
        expect(moved).toMatchObject({ _tag: "InvalidInput", field: "fulfilment.url" })
      })
    )

    it.effect(
      "push: the signing secret is shown once, never listed, kept with its url, new with a new url or a rotation",
      () =>
        Effect.gen(function* () {
          const publishing = yield* Publishing
          const catalog = yield* Catalog
          const seller = yield* agent()
          const url = "https://seller.example/orders"
          const pushed = yield* publishing.publish(seller, body({ mode: "push", url }))
          expect(pushed.fulfilment).toEqual({ mode: "push" })
          expect(pushed.fulfilmentSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
          expect(Buffer.from(pushed.fulfilmentSecret!.slice(6), "base64")).toHaveLength(32)
          // Read back, listed or updated without a new url: the mode only.
          const read = yield* catalog.getService(pushed.id)
          expect(JSON.stringify(read)).not.toContain(pushed.fulfilmentSecret!)
          expect(JSON.stringify(read)).not.toContain(url)
          const listed = (yield* catalog.list({ sellerId: seller.agentId!, limit: 10 })).data
          expect(listed.map((s) => s.fulfilment)).toEqual([{ mode: "push" }])
          const renamed = yield* publishing.update(seller, pushed.id, {
            name: "Renamed",
            fulfilment: { mode: "push", url }
          })
          expect(renamed).not.toHaveProperty("fulfilmentSecret")
          expect((yield* catalog.getRecord(pushed.id)).fulfilment).toEqual({
            mode: "push",
            url,
            secret: pushed.fulfilmentSecret
          })
          // A new url: a new secret, shown in that answer.
          const moved = yield* publishing.update(seller, pushed.id, {
            fulfilment: { mode: "push", url: "https://seller.example/v2/orders" }
          })
          expect(moved.fulfilmentSecret).toMatch(/^whsec_/)
          expect(moved.fulfilmentSecret).not.toBe(pushed.fulfilmentSecret)
          // Rotation: a new secret, stored, and the old one no longer.
          const rotated = yield* publishing.rotateFulfilmentSecret(seller, pushed.id)
          expect(rotated.serviceId).toBe(pushed.id)
          expect(rotated.fulfilmentSecret).not.toBe(moved.fulfilmentSecret)
          expect((yield* catalog.getRecord(pushed.id)).fulfilment.secret).toBe(rotated.fulfilmentSecret)
          // Back to pull: the url and secret are gone.
          yield* publishing.update(seller, pushed.id, { fulfilment: { mode: "pull" } })
          expect((yield* catalog.getRecord(pushed.id)).fulfilment).toEqual({ mode: "pull", url: null, secret: null })
        })
    )

    it.effect("rotation: only the seller's own push service has a secret to rotate", () =>
      Effect.gen(function* () {
        const publishing = yield* Publishing
        const seller = yield* agent()
        const other = yield* agent()
        const pushed = yield* publishing.publish(seller, body({ mode: "push", url: "https://seller.example/o" }))
        const pulled = yield* publishing.publish(seller, body({ mode: "pull" }))
        expect(yield* Effect.flip(publishing.rotateFulfilmentSecret(other, pushed.id))).toMatchObject({
          _tag: "NotFound"
        })
        expect(yield* Effect.flip(publishing.rotateFulfilmentSecret(seller, pulled.id))).toMatchObject({
          _tag: "Conflict"
        })
        const buyerOnly = { ...seller, permissions: new Set(["commerce:buy"] as const) }
        expect(yield* Effect.flip(publishing.rotateFulfilmentSecret(buyerOnly, pushed.id))).toMatchObject({
          _tag: "Forbidden"
        })
      })
    )
  }
)
