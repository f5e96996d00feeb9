// A race the money model found on Postgres, made deterministic: a
// purchase's limit check reads the escrow its running sagas hold and the spend of the day; when
// another of the buyer's sagas settled in between (its settlement did not wait for the buyer's
// wallet lock), its price was counted twice — as held and as spent — and a
// purchase within the limit was refused. The owner's promise is "completed + held + price within the limit": here
// 150 + 150 against 300 must go through. The wait is opened by a hook on the held-escrow read
// (the buyer's check pauses right after it) and the other saga is settled meanwhile; when it cannot
// settle while the buyer's check is open (Postgres shows it waiting for a lock), the check goes on.
import { Clock, Context, Deferred, Effect, Exit, Fiber, Layer, Schedule, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { Sagas } from "../../src/services/saga/Saga.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { setClock } from "../fixtures/clock.js"
import { postgresCase, storageCases } from "../fixtures/db.js"
import { tier } from "../fixtures/money.js"
import * as M from "./model.js"
import { agentSeller, type Services, servicesLayer, type Stores, storageFor } from "./system.js"

describe.skipIf(postgresCase.skip !== undefined || !storageCases.includes(postgresCase))(
  "held escrow and spend read apart [postgres]",
  () => {
    it("a saga settling during another purchase's limit check is not counted twice", async () => {
      const result = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const storage = yield* storageFor(postgresCase)
            const scope = yield* Scope.make()
            const stores = yield* storage.open(scope)
            const hook = { armed: false, paused: yield* Deferred.make<void>(), go: yield* Deferred.make<void>() }
            const wallet = Context.get(stores, WalletStore)
            const hooked = Context.add(stores, WalletStore, {
              ...wallet,
              heldCents: (agentId: string) =>
                Effect.tap(wallet.heldCents(agentId), () => {
                  if (!hook.armed) return Effect.void
                  hook.armed = false
                  return Effect.andThen(
                    Deferred.succeed(hook.paused, undefined),
                    Effect.ignore(Effect.timeout(Deferred.await(hook.go), "3 seconds"))
                  )
                })
            })
            const ctx = Context.merge(
              hooked,
              yield* Layer.buildWithScope(servicesLayer, scope).pipe(Effect.provideContext(hooked))
            )
            // The run's own clock, set by the test (sleeping still takes real time).
            const { clock, advance } = setClock(Date.UTC(2026, 4, 12, 6))
            const within = <A, E>(effect: Effect.Effect<A, E, Stores | Services>) =>
              effect.pipe(Effect.provideService(Clock.Clock, clock), Effect.provideContext(ctx))
            try {
              const buyer = yield* within(agentSeller("Race buyer", [tier("t0", 100)], "model-a"))
              yield* within(Effect.flatMap(Wallet, (w) => w.topup(buyer.agentId, 1_000)))
              yield* within(
                Effect.flatMap(Wallet, (w) =>
                  w.updatePolicy(buyer.agentId, { ...M.DEFAULT_POLICY, dailyLimitCents: 300 } as never, {
                    byOwner: true
                  })
                )
              )
              const start = (input: unknown) =>
                within(
                  Effect.flatMap(Sagas, (s) =>
                    s.start(buyer.caller, { serviceId: M.PLATFORM_SERVICE, tierId: "priority", input } as never)
                  )
                )
              // One saga holds 150 until its slow delivery is due.
              const first = yield* start({ simulate: "slow", delayMs: M.SLOW_MS })
              expect(first.status).toBe("running")
              advance(1_000)
              // The second (150 more: 300, exactly the limit) pauses after reading what is held…
              hook.armed = true
              const second = yield* Effect.forkChild(start({ n: 1 }))
              yield* Deferred.await(hook.paused)
              // …while the first settles (its 150 moves from held to spent), then goes on.
              const runDue = within(Effect.flatMap(Sagas, (s) => s.runDue()))
              const settling = yield* Effect.forkChild(runDue)
              // Until it has settled, or waits for a lock the paused check holds (then it settles after).
              // Postgres stores carry the SQL client (the type of the stores does not say which storage).
              const sql = Context.getUnsafe(stores, SqlClient.SqlClient)
              const waitsForLock = sql<{
                readonly n: number
              }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
                Effect.map(([r]) => r.n > 0),
                Effect.orDie
              )
              const blocked = Effect.repeat(waitsForLock, { until: (b) => b, schedule: Schedule.spaced("10 millis") })
              yield* Effect.ignore(Effect.timeout(Effect.raceFirst(Fiber.await(settling), blocked), "10 seconds"))
              yield* Deferred.succeed(hook.go, undefined)
              const done = yield* Fiber.join(second)
              yield* Fiber.join(settling)
              yield* runDue
              const settled = yield* within(Effect.flatMap(Sagas, (s) => s.get(buyer.agentId, first.id)))
              return { first: settled.status, second: done.status, failure: done.failure }
            } finally {
              yield* Scope.close(scope, Exit.void)
            }
          })
        ) as Effect.Effect<{ first: string; second: string; failure: unknown }, unknown>
      )
      expect(result).toEqual({ first: "completed", second: "completed", failure: null })
    }, 60_000)
  }
)
