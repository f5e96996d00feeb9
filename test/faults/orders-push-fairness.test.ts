// A dead push seller delays only its own orders (docs/fulfilment.md, "Push"): with one seller's
// endpoint refusing connections and another's accepting and never answering, 400 orders waiting at
// each, a healthy seller's orders are answered within 2× the time they take alone. Measured here on
// the dispatcher with the real transport and real sockets (the store is an in-memory stand-in, so
// the figure is the dispatcher's own fairness); the numbers are printed for the record.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { PUSH_PER_SELLER } from "../../src/services/purchases/push.js"
import { newSecret, pushOrders } from "../fixtures/pushOrders.js"
import { refusingUrl, startPushSeller } from "../fixtures/pushSeller.js"
import { eventually } from "../fixtures/wait.js"

const HANDLING_MS = 40
const SAMPLES = 25
const DEAD_ORDERS = 400

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

describe("order push fairness", () => {
  it.live(
    `a refusing and a silent seller with ${DEAD_ORDERS} orders each do not slow another seller's orders beyond 2×`,
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const p = pushOrders()
          const healthy = yield* Effect.acquireRelease(
            Effect.promise(() =>
              startPushSeller(
                () =>
                  new Promise((resolve) =>
                    setTimeout(() => resolve({ status: 200, body: { status: "delivered", output: "ok" } }), HANDLING_MS)
                  )
              )
            ),
            (s) => Effect.promise(() => s.close())
          )
          const silent = yield* Effect.acquireRelease(
            Effect.promise(() => startPushSeller(() => "hang")),
            (s) => Effect.promise(() => s.close())
          )
          p.services.set("svc_ok", { url: healthy.url, secret: newSecret() })
          p.services.set("svc_silent", { url: silent.url, secret: newSecret() })
          p.services.set("svc_refusing", { url: yield* Effect.promise(refusingUrl), secret: newSecret() })
          yield* p.dispatcher()

          /** Places one healthy order at a time and times it from placing to the seller's answer recorded. */
          const measure = Effect.promise(async () => {
            const out: Array<number> = []
            for (let i = 0; i < SAMPLES; i++) {
              const started = performance.now()
              const order = p.place("svc_ok", "agt_ok")
              const done = await eventually(
                () => p.answers.find((a) => a.orderId === order.id),
                (a) => a !== undefined
              )
              out.push(done!.at - started)
            }
            return out
          })

          const alone = yield* measure
          for (let i = 0; i < DEAD_ORDERS; i++) {
            p.place("svc_silent", "agt_silent")
            p.place("svc_refusing", "agt_refusing")
          }
          const refusedAttempts = () =>
            [...p.orders.values()]
              .filter((o) => o.sellerAgentId === "agt_refusing")
              .reduce((n, o) => n + (o.push?.attempts ?? 0), 0)
          // Both dead sellers are busy: the silent one holds its slots, the refusing one keeps failing.
          yield* Effect.promise(() =>
            eventually(
              () => silent.hanging(),
              (n) => n === PUSH_PER_SELLER
            )
          )
          yield* Effect.promise(() => eventually(refusedAttempts, (n) => n >= 50))
          const beside = yield* measure

          const figures = {
            handlingMs: HANDLING_MS,
            aloneP50: Math.round(quantile(alone, 0.5)),
            aloneP90: Math.round(quantile(alone, 0.9)),
            besideP50: Math.round(quantile(beside, 0.5)),
            besideP90: Math.round(quantile(beside, 0.9)),
            refusedAttempts: refusedAttempts(),
            silentMostAtOnce: silent.mostHanging()
          }
          console.info(`order push fairness: ${JSON.stringify(figures)}`)
          expect(figures.silentMostAtOnce).toBe(PUSH_PER_SELLER)
          expect(figures.besideP50).toBeLessThanOrEqual(2 * figures.aloneP50)
          // The tail gets room for a loaded machine, still far below one retry delay or one timeout.
          expect(figures.besideP90).toBeLessThanOrEqual(2 * figures.aloneP90 + 100)
          expect(healthy.pushes).toHaveLength(2 * SAMPLES)
        })
      ),
    60_000
  )
})
