// Keys suite, on every storage: authentication reads a per-process cache (docs/keys.md). A
// revocation made through Keys is refused at once; by another process (a second Keys over the same
// store) within the cache's TTL, told or not (a lost notification: a store whose changes never
// reach it); on Postgres the notification evicts it at once. A new key works at once (unknown keys
// are never cached). The cache's TTL is on the service's clock: TestClock moves it.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Agent } from "../../src/schema/keys/keys.js"
import { Ids } from "../../src/services/platform/Db.js"
import { KEY_CACHE_TTL_MS, Keys } from "../../src/services/keys/Keys.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { forEachStorage } from "../fixtures/suite.js"
import { eventuallyEffect } from "../fixtures/wait.js"

forEachStorage(
  "keys",
  (storage) => Keys.layer.pipe(Layer.provideMerge(storage), Layer.provideMerge(Ids.Live)),
  (it, c) => {
    const newKey = (email: string) =>
      Effect.gen(function* () {
        const keys = yield* Keys
        const account = yield* keys.signUp({ email, password: "correct horse battery", name: "Cache" })
        const agent = yield* keys.createAgent(account.id, { name: "cached" })
        const created = yield* keys.createKey(account.id, agent.id, { name: "k", permissions: ["catalog:read"] })
        return { account, agent, ...created }
      })

    it.effect(
      "agentsById: the agents that exist among 2,500 ids (duplicates and unknown ones too), read across three chunks of 1,000",
      () =>
        Effect.gen(function* () {
          const keys = yield* Keys
          const store = yield* KeysStore
          const account = yield* keys.signUp({
            email: "many-agents@example.com",
            password: "correct horse battery",
            name: "Many"
          })
          const ids = Array.from({ length: 2_100 }, (_, i) => `agt_many_${String(i).padStart(5, "0")}`)
          for (const id of ids)
            yield* store.insertAgent(
              Agent.make({
                id,
                accountId: account.id,
                name: id,
                organization: null,
                createdAt: "2026-11-25T00:00:00.000Z"
              })
            )
          const asked = [...ids, ...ids.slice(0, 100), ...Array.from({ length: 300 }, (_, i) => `agt_unknown_${i}`)]
          const found = yield* keys.agentsById(asked)
          expect(found.size).toBe(2_100)
          expect(found.get("agt_many_02099")?.name).toBe("agt_many_02099")
          expect(found.has("agt_unknown_0")).toBe(false)
          expect((yield* keys.agentsById([])).size).toBe(0)
        }),
      { timeout: 60_000 }
    )

    it.effect(
      "one account inserted by two processes at once (two replicas seeding an empty database): one row, the other a Conflict, never a storage error",
      () =>
        Effect.gen(function* () {
          const store = yield* KeysStore
          for (let round = 0; round < 20; round++) {
            const account = {
              id: `acct_seeded_${round}`,
              email: `seeded-${round}@platform.invalid`,
              name: "Seeded twice",
              passwordHash: "disabled",
              planId: null,
              createdAt: "2026-12-02T00:00:00.000Z"
            }
            const [a, b] = yield* Effect.all(
              [Effect.result(store.insertAccount(account)), Effect.result(store.insertAccount(account))],
              {
                concurrency: 2
              }
            )
            const outcomes = [a, b].map((r) => (r._tag === "Success" ? "made" : r.failure._tag)).sort()
            expect(outcomes).toEqual(["Conflict", "made"])
            expect((yield* store.getAccount(account.id))?.email).toBe(account.email)
          }
        })
    )

    it.effect("revoked through Keys: refused on the very next request, though the key was cached", () =>
      Effect.gen(function* () {
        const keys = yield* Keys
        const k = yield* newKey("cache-revoke@example.com")
        expect((yield* keys.authenticate(k.secret)).caller.keyId).toBe(k.key.id)
        yield* keys.revokeKey(k.account.id, k.key.id)
        expect(yield* Effect.flip(keys.authenticate(k.secret))).toMatchObject({
          _tag: "Unauthorized",
          message: "this API key was revoked"
        })
      })
    )

    // Another process: a second Keys over the same store, with its own cache and (on Postgres) its own
    // listener. The clock is the test's (TestClock): nothing here waits for the TTL to pass.
    const otherProcess = (store: KeysStore["Service"]) => Keys.make.pipe(Effect.provideService(KeysStore, store))

    it.effect(
      "revoked in another process whose notification is lost: served from this process's cache until the TTL, refused from the TTL on",
      () =>
        Effect.gen(function* () {
          const keys = yield* Keys
          const store = yield* KeysStore
          // The listener reconnecting: no revocation reaches this process but through the store.
          const deaf = yield* otherProcess({ ...store, watchKeyChanges: () => Effect.void })
          const k = yield* newKey("cache-lost@example.com")
          expect((yield* deaf.authenticate(k.secret)).caller.keyId).toBe(k.key.id)
          yield* keys.revokeKey(k.account.id, k.key.id)
          yield* TestClock.adjust(KEY_CACHE_TTL_MS - 1)
          expect((yield* deaf.authenticate(k.secret)).caller.keyId).toBe(k.key.id)
          yield* TestClock.adjust(1)
          expect(yield* Effect.flip(deaf.authenticate(k.secret))).toMatchObject({
            _tag: "Unauthorized",
            message: "this API key was revoked"
          })
        })
    )

    it.effect("revoked in another process: refused by this one within the cache TTL of the revocation", () =>
      Effect.gen(function* () {
        const keys = yield* Keys
        const other = yield* otherProcess(yield* KeysStore)
        const k = yield* newKey("cache-ttl@example.com")
        yield* other.authenticate(k.secret)
        yield* keys.revokeKey(k.account.id, k.key.id)
        // Before the TTL the other process may still serve it from its cache (or, on Postgres, have
        // been told already); at the TTL it refuses it, whatever became of the notification. A read
        // before the TTL does not extend the entry's life.
        yield* TestClock.adjust(KEY_CACHE_TTL_MS - 1)
        yield* Effect.result(other.authenticate(k.secret))
        yield* TestClock.adjust(1)
        expect(yield* Effect.flip(other.authenticate(k.secret))).toMatchObject({
          _tag: "Unauthorized",
          message: "this API key was revoked"
        })
      })
    )

    if (c.name === "postgres")
      it.effect(
        "Postgres: another process is told of a revocation when it commits and refuses the key with the clock standing still",
        () =>
          Effect.gen(function* () {
            const keys = yield* Keys
            const other = yield* otherProcess(yield* KeysStore)
            const k = yield* newKey("cache-notified@example.com")
            yield* other.authenticate(k.secret)
            yield* keys.revokeKey(k.account.id, k.key.id)
            const answer = yield* eventuallyEffect(
              Effect.result(other.authenticate(k.secret)),
              (r) => r._tag === "Failure"
            )
            expect(answer).toMatchObject({
              _tag: "Failure",
              failure: { _tag: "Unauthorized", message: "this API key was revoked" }
            })
          })
      )

    it.effect("a key created a moment ago works at once; an unknown one is 401 every time (never cached)", () =>
      Effect.gen(function* () {
        const keys = yield* Keys
        const unknown = `ak_live_${"x".repeat(43)}`
        expect(yield* Effect.flip(keys.authenticate(unknown))).toMatchObject({ message: "unknown API key" })
        const k = yield* newKey("cache-new@example.com")
        expect((yield* keys.authenticate(k.secret)).caller.agentId).toBe(k.agent.id)
        expect(yield* Effect.flip(keys.authenticate(unknown))).toMatchObject({ message: "unknown API key" })
      })
    )
  }
)
