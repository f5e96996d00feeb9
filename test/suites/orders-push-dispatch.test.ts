// What a push seller is promised by the dispatcher itself (docs/fulfilment.md, "Push"): each order
// posted signed with its own secret under the order's id, the inline answer taken as its answer, a
// 202 ending the pushes, a failed or silent attempt retried with the same id and a fresh valid
// signature after 1 s, 2 s …; and two processes never pushing the same order at once. The
// purchase path around it (escrow, settlement, the buy's wait) is test/suites/orders-push.test.ts.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushBackoff } from "../../src/services/purchases/push.js"
import { MAX_RESPONSE_BYTES } from "../../src/services/webhooks/policy.js"
import { newSecret, pushOrders } from "../fixtures/pushOrders.js"
import { startPushSeller } from "../fixtures/pushSeller.js"
import { eventually } from "../fixtures/wait.js"

const sellerOf = (reply?: Parameters<typeof startPushSeller>[0]) =>
  Effect.acquireRelease(
    Effect.promise(() => startPushSeller(reply)),
    (s) => Effect.promise(() => s.close())
  )

describe("order push dispatcher", () => {
  it("backs off 1 s, 2 s, 4 s … capped at 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(pushBackoff)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000
    ])
  })

  it.live("posts the order signed with the service's secret under the order's id; the inline answer delivers it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const p = pushOrders()
        const seller = yield* sellerOf((push) => ({
          status: 200,
          body: { status: "delivered", output: { echo: push.data.input }, latencyMs: 3 }
        }))
        seller.secret = newSecret()
        p.services.set("svc_a", { url: seller.url, secret: seller.secret })
        yield* p.dispatcher()
        const order = p.place("svc_a", "agt_seller_a", { text: "hi" })
        yield* Effect.promise(() =>
          eventually(
            () => p.answers.length,
            (n) => n === 1
          )
        )
        expect(seller.pushes).toHaveLength(1)
        const [push] = seller.pushes
        expect(push.verified).toBe(true)
        expect(push.webhookId).toBe(order.id)
        expect(push.type).toBe("order.created")
        expect(push.data).toEqual({
          orderId: order.id,
          serviceId: "svc_a",
          tierId: "basic",
          input: { text: "hi" },
          priceCents: 25,
          currency: "USD",
          buyerAgentId: "agt_buyer",
          deadlineAt: order.deadlineAt
        })
        expect(p.answers[0]).toMatchObject({
          orderId: order.id,
          sellerAgentId: "agt_seller_a",
          outcome: "delivered",
          body: { output: { echo: { text: "hi" } }, latencyMs: 3 }
        })
      })
    )
  )

  it.live(
    "an inline failure fails the order (refund is Orders'); a 202 ends the pushes, the seller answers later",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const p = pushOrders()
          const seller = yield* sellerOf((push) =>
            push.data.input === "fail"
              ? { status: 200, body: { status: "failed", error: "cannot do that" } }
              : { status: 202, body: { status: "accepted" } }
          )
          seller.secret = newSecret()
          p.services.set("svc_b", { url: seller.url, secret: seller.secret })
          yield* p.dispatcher()
          const failing = p.place("svc_b", "agt_seller_b", "fail")
          const later = p.place("svc_b", "agt_seller_b", "later")
          yield* Effect.promise(() =>
            eventually(
              () => p.orders.get(later.id)!.push?.acceptedAt,
              (a) => a !== null
            )
          )
          expect(p.answers).toEqual([expect.objectContaining({ orderId: failing.id, outcome: "failed" })])
          expect(p.answers[0].body).toEqual({ error: "cannot do that" })
          // Past the first retry delay: still one push of the accepted order, none due.
          yield* Effect.sleep(pushBackoff(1) + 500)
          expect(seller.pushes.filter((x) => x.webhookId === later.id)).toHaveLength(1)
          expect(p.orders.get(later.id)!.push).toMatchObject({ attempts: 1, nextAttemptAt: null, lastError: null })
        })
      )
  )

  it.live(
    "a seller that errs, then does not answer in time, then delivers: three pushes 1 s and 2 s apart, one id, each signature valid",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const p = pushOrders({ timeoutMs: 400 })
          const seller = yield* sellerOf((_push, attempt) =>
            attempt === 1
              ? { status: 500, body: { message: "busy" } }
              : attempt === 2
                ? "hang"
                : { status: 200, body: { status: "delivered", output: "done" } }
          )
          seller.secret = newSecret()
          p.services.set("svc_c", { url: seller.url, secret: seller.secret })
          yield* p.dispatcher()
          const order = p.place("svc_c", "agt_seller_c")
          yield* Effect.promise(() =>
            eventually(
              () => p.answers.length,
              (n) => n === 1,
              { timeoutMs: 15_000 }
            )
          )
          expect(seller.pushes.map((x) => x.webhookId)).toEqual([order.id, order.id, order.id])
          expect(seller.pushes.every((x) => x.verified)).toBe(true)
          expect(new Set(seller.pushes.map((x) => x.body)).size).toBe(1)
          // The schedule as the dispatcher wrote it, not as the sockets timed it: each attempt claimed
          // (its start written), then its failure written with the next attempt due exactly the
          // backoff after a moment inside the attempt; and the next attempt never starts before that.
          const writes = p.writes.filter((w) => w.orderId === order.id)
          expect(writes.map((w) => [w.push.attempts, w.offeredAt !== undefined])).toEqual([
            [1, true],
            [1, false],
            [2, true],
            [2, false],
            [3, true]
          ])
          const [claim1, failed1, claim2, failed2, claim3] = writes
          const at = (iso: string | null | undefined) => Date.parse(iso!)
          expect(failed1.push.lastError).toMatch(/500/)
          const from1 = at(failed1.push.nextAttemptAt) - pushBackoff(1)
          expect(from1).toBeGreaterThanOrEqual(at(claim1.offeredAt))
          expect(from1).toBeLessThanOrEqual(failed1.writtenAt)
          expect(at(claim2.offeredAt)).toBeGreaterThanOrEqual(at(failed1.push.nextAttemptAt))
          expect(failed2.push.lastError).toMatch(/time/i)
          const from2 = at(failed2.push.nextAttemptAt) - pushBackoff(2)
          // The second attempt failed by the 400 ms timeout, so its retry is counted from after it.
          expect(from2 - at(claim2.offeredAt)).toBeGreaterThanOrEqual(400 - 5)
          expect(from2).toBeLessThanOrEqual(failed2.writtenAt)
          expect(at(claim3.offeredAt)).toBeGreaterThanOrEqual(at(failed2.push.nextAttemptAt))
          // …nor long after (a 250 ms tick, or a wake-up, picks it up): a bound of lateness only.
          expect(at(claim2.offeredAt) - at(failed1.push.nextAttemptAt)).toBeLessThan(1_000)
          expect(at(claim3.offeredAt) - at(failed2.push.nextAttemptAt)).toBeLessThan(1_000)
          expect(p.answers[0]).toMatchObject({ orderId: order.id, outcome: "delivered", body: { output: "done" } })
          expect(p.orders.get(order.id)!.push?.attempts).toBe(3)
        })
      ),
    30_000
  )

  it.live("a 200 that is not an answer is retried, its reason kept on the order", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const p = pushOrders()
        const seller = yield* sellerOf(() => ({ status: 200, body: { ok: true } }))
        seller.secret = newSecret()
        p.services.set("svc_d", { url: seller.url, secret: seller.secret })
        yield* p.dispatcher()
        const order = p.place("svc_d", "agt_seller_d")
        const push = yield* Effect.promise(() =>
          eventually(
            () => p.orders.get(order.id)!.push,
            (s) => s !== null && s.attempts === 1 && s.lastError !== null
          )
        )
        expect(push!.lastError).toMatch(/not \{"status":"delivered"/)
        expect(p.answers).toEqual([])
      })
    )
  )

  it.live("an inline answer over the 64 KiB response cap is not taken: retried, the seller told why", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const p = pushOrders()
        const seller = yield* sellerOf(() => ({
          status: 200,
          body: { status: "delivered", output: "x".repeat(MAX_RESPONSE_BYTES) }
        }))
        seller.secret = newSecret()
        p.services.set("svc_big", { url: seller.url, secret: seller.secret })
        yield* p.dispatcher()
        const order = p.place("svc_big", "agt_seller_big")
        const push = yield* Effect.promise(() =>
          eventually(
            () => p.orders.get(order.id)!.push,
            (s) => s !== null && s.attempts === 1 && s.lastError !== null
          )
        )
        expect(push!.lastError).toMatch(/within the cap/)
        expect(p.answers).toEqual([])
      })
    )
  )

  it.live(
    "an attempt in flight is its process's while the transport may still be waiting: no dispatcher is offered the order before its timeout (45 s here)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          // The transport waits up to 45 s for a seller (WEBHOOK_TIMEOUT_MS allows up to 60 s); the
          // lease was a fixed 30 s, after which another process would push the order a second time
          // while the first attempt could still be answered.
          const p = pushOrders({ timeoutMs: 45_000 })
          const seller = yield* sellerOf(() => "hang")
          seller.secret = newSecret()
          p.services.set("svc_h", { url: seller.url, secret: seller.secret })
          yield* p.dispatcher()
          const order = p.place("svc_h", "agt_seller_h")
          yield* Effect.promise(() =>
            eventually(
              () => seller.pushes.length,
              (n) => n === 1
            )
          )
          const claimed = p.writes.find((w) => w.orderId === order.id && w.offeredAt !== undefined)!
          // What every dispatcher's pass asks: at any moment before the transport gives up, not due.
          const askedAt = (ms: number) => new Date(claimed.writtenAt + ms).toISOString()
          for (const ms of [29_000, 31_000, 44_999])
            expect((yield* p.store.duePushes(askedAt(ms), 4, 100)).map((o) => o.id)).not.toContain(order.id)
          // Once it has given up (and recorded its answer: 5 s), the order may be taken again.
          expect((yield* p.store.duePushes(askedAt(50_001), 4, 100)).map((o) => o.id)).toContain(order.id)
        })
      )
  )

  it.live("two dispatchers (two processes) over one store never push the same order at once, and each order once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const p = pushOrders()
        let received = 0
        let again = 0
        const seen = new Map<string, number>()
        const seller = yield* sellerOf(() => ({ status: 200, body: { status: "delivered", output: 1 } }))
        const reply = seller.reply
        seller.reply = (push, attempt) => {
          const n = (seen.get(push.webhookId) ?? 0) + 1
          seen.set(push.webhookId, n)
          if (n > 1) again++
          received++
          return reply(push, attempt)
        }
        seller.secret = newSecret()
        p.services.set("svc_e", { url: seller.url, secret: seller.secret })
        yield* p.dispatcher()
        yield* p.dispatcher()
        const placed = Array.from({ length: 40 }, () => p.place("svc_e", "agt_seller_e"))
        yield* Effect.promise(() =>
          eventually(
            () => p.answers.length,
            (n) => n === placed.length
          )
        )
        expect(again).toBe(0)
        expect(received).toBe(placed.length)
        expect(new Set(seller.pushes.map((x) => x.webhookId)).size).toBe(placed.length)
      })
    )
  )
})
