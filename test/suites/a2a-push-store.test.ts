// What the A2A push notification worker relies on from its store (docs/a2a.md "Push notifications"),
// on every storage: a due configuration is claimed by one pass at a time (leased: a second pass skips
// it until the lease ends), oldest due first; a configuration deleted or replaced while a notification
// was on its way is not written over by that notification's outcome; done ones are neither claimed
// nor counted among an agent's waiting ones.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { PushConfigRecord } from "../../src/schema/a2a/push.js"
import { PushConfigStore } from "../../src/services/a2a/PushConfigStore.js"
import { Transactor } from "../../src/services/platform/Db.js"
import { forEachStorage } from "../fixtures/suite.js"

const iso = (ms: number) => new Date(ms).toISOString()
const T0 = Date.parse("2026-12-02T10:00:00.000Z")

forEachStorage(
  "a2a push configuration store",
  (storage) => storage,
  (it) => {
    const agent = () => `agt_push_${Math.random().toString(36).slice(2, 10)}`
    const config = (agentId: string, taskId: string, id: string, dueAt: number | null): PushConfigRecord => ({
      taskId,
      id,
      agentId,
      url: "https://example.com/hook",
      token: null,
      authScheme: null,
      authCredentials: null,
      createdAt: iso(T0),
      nextAttemptAt: dueAt === null ? null : iso(dueAt),
      attempts: 0,
      lastError: null,
      pushedState: null,
      doneAt: dueAt === null ? iso(T0) : null
    })
    const claim = (now: number, limit = 100) =>
      Effect.flatMap(Transactor, ({ atomically }) =>
        atomically(Effect.flatMap(PushConfigStore, (s) => s.claimDue(iso(now), iso(now + 30_000), limit)))
      )
    // Far in the future of every other test's rows, so this test's claims see only its own.
    const FAR = Date.parse("2090-01-01T00:00:00.000Z")

    it.effect("claimed oldest due first, once per lease; done ones never; an agent counts its waiting ones", () =>
      Effect.gen(function* () {
        const store = yield* PushConfigStore
        const a = agent()
        const t = `tx_${a}`
        yield* store.put(config(a, t, "late", FAR + 2_000))
        yield* store.put(config(a, t, "early", FAR + 1_000))
        yield* store.put(config(a, t, "done", null))
        yield* store.put(config(a, t, "future", FAR + 1_000_000))
        expect(yield* store.countOpen(a)).toBe(3)
        // The oldest due first (a pass of one takes it), then the next.
        const [early] = (yield* claim(FAR + 5_000, 1)).filter((r) => r.agentId === a)
        expect(early).toMatchObject({ id: "early", nextAttemptAt: iso(FAR + 35_000) })
        const [late] = (yield* claim(FAR + 5_000, 10)).filter((r) => r.agentId === a)
        expect(late).toMatchObject({ id: "late", nextAttemptAt: iso(FAR + 35_000) })
        const first = [early!, late!]
        // Leased: a second pass before the lease ends takes none of them.
        expect((yield* claim(FAR + 6_000)).filter((r) => r.agentId === a)).toEqual([])
        // After it, they are due again.
        const again = (yield* claim(FAR + 36_000)).filter((r) => r.agentId === a)
        expect(again.map((r) => r.id).sort()).toEqual(["early", "late"])
        // Done: neither claimed nor counted.
        yield* store.update({
          ...first[0]!,
          nextAttemptAt: null,
          doneAt: iso(FAR + 40_000),
          pushedState: "TASK_STATE_COMPLETED"
        })
        expect(yield* store.countOpen(a)).toBe(2)
        expect(yield* store.delete(t, "late")).toBe(true)
        expect(yield* store.delete(t, "late")).toBe(false)
        expect(yield* store.countOpen(a)).toBe(1)
        expect((yield* store.listForTask(t)).map((r) => r.id).sort()).toEqual(["done", "early", "future"])
      })
    )

    it.effect("a notification's outcome does not write over a configuration deleted or replaced meanwhile", () =>
      Effect.gen(function* () {
        const store = yield* PushConfigStore
        const a = agent()
        const t = `tx_${a}`
        const original = config(a, t, "hook", FAR + 1_000)
        yield* store.put(original)
        const [claimed] = (yield* claim(FAR + 2_000)).filter((r) => r.agentId === a)
        // Replaced by the client (same id, new URL) while the notification was on its way.
        const replacement = { ...original, url: "https://example.com/new", createdAt: iso(T0 + 1) }
        yield* store.put(replacement)
        expect(yield* store.update({ ...claimed!, nextAttemptAt: null, doneAt: iso(FAR + 3_000) })).toBe(false)
        expect(yield* store.get(t, "hook")).toEqual(replacement)
        // Deleted meanwhile: nothing comes back.
        yield* store.delete(t, "hook")
        expect(yield* store.update({ ...replacement, attempts: 1 })).toBe(false)
        expect(yield* store.get(t, "hook")).toBeUndefined()
      })
    )
  }
)
