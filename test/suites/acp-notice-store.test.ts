// What the ACP order events worker relies on from its store (docs/acp.md "Order events"), on every
// storage: a refund that reopens a notice while the worker is looking at the order it read before
// the refund is not written over by the worker's outcome (the notice stays due, so the refund is
// told); a notice nobody reopened takes the worker's outcome; only the buyer's own purchase reopens
// its session's notice.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import type { AcpOrderNotice } from "../../src/schema/acp/sessions.js"
import { AcpOrderNoticeStore } from "../../src/services/acp/AcpOrderNoticeStore.js"
import { forEachStorage } from "../fixtures/suite.js"

const iso = (ms: number) => new Date(ms).toISOString()
// Far in the future of every other test's rows, so this test's claims see only its own.
const FAR = Date.parse("2091-01-01T00:00:00.000Z")

forEachStorage(
  "acp order notice store",
  (storage) => storage,
  (it) => {
    const unique = () => Math.random().toString(36).slice(2, 10)
    const notice = (sessionId: string, agentId: string, dueAt: number): AcpOrderNotice => ({
      sessionId,
      agentId,
      createdAt: iso(FAR),
      notifiedStatus: null,
      attempts: 0,
      lastError: null,
      nextAttemptAt: iso(dueAt),
      doneAt: null
    })
    const claimOwn = (sessionId: string, now: number) =>
      Effect.map(
        Effect.flatMap(AcpOrderNoticeStore, (s) => s.claimDue(iso(now), iso(now + 30_000), 100)),
        (ns) => ns.filter((n) => n.sessionId === sessionId)
      )

    it.effect("the worker's outcome is written unless a refund reopened the notice during its look", () =>
      Effect.gen(function* () {
        const store = yield* AcpOrderNoticeStore
        const [s1, s2, agent] = [`cs_${unique()}`, `cs_${unique()}`, `agt_${unique()}`]
        yield* store.insert(notice(s1, agent, FAR + 1_000))
        yield* store.insert(notice(s2, agent, FAR + 1_500))

        // Nobody reopened s1: the worker's outcome (completed told, done) stands.
        const [c1] = yield* claimOwn(s1, FAR + 1_200)
        expect(c1!.nextAttemptAt).toBe(iso(FAR + 31_200))
        const told = {
          ...c1!,
          notifiedStatus: "completed",
          notifiedRefund: false,
          nextAttemptAt: null,
          doneAt: iso(FAR + 2_100)
        }
        expect(yield* store.update(told, c1!.nextAttemptAt!)).toBe(true)
        expect(yield* store.get(s1)).toEqual(told)

        // s2: claimed, the order read (not refunded yet), then the refund reopens the notice before the
        // worker writes that the completed order was told and the notice is done.
        const [c2] = yield* claimOwn(s2, FAR + 2_000)
        yield* store.reopen(s2, agent, iso(FAR + 2_050))
        const stale = {
          ...c2!,
          notifiedStatus: "completed",
          notifiedRefund: false,
          nextAttemptAt: null,
          doneAt: iso(FAR + 2_100)
        }
        expect(yield* store.update(stale, c2!.nextAttemptAt!)).toBe(false)
        expect(yield* store.get(s2)).toMatchObject({
          nextAttemptAt: iso(FAR + 2_050),
          doneAt: null,
          notifiedStatus: null
        })
        // Still due: the next pass takes it and reads the refunded order.
        expect((yield* claimOwn(s2, FAR + 2_200)).map((n) => n.sessionId)).toEqual([s2])

        // A notice given up (eight answers of 500) and done, reopened by its buyer's refund: due now,
        // its attempts and error cleared, the rest kept.
        const s3 = `cs_${unique()}`
        const givenUp = {
          ...notice(s3, agent, FAR),
          notifiedStatus: "processing",
          attempts: 8,
          lastError: "answered 500",
          nextAttemptAt: null,
          doneAt: iso(FAR)
        }
        yield* store.insert(givenUp)
        yield* store.reopen(s3, agent, iso(FAR + 3_000))
        expect(yield* store.get(s3)).toEqual({
          ...givenUp,
          nextAttemptAt: iso(FAR + 3_000),
          doneAt: null,
          attempts: 0,
          lastError: null
        })
        expect((yield* claimOwn(s3, FAR + 3_000)).map((n) => n.sessionId)).toEqual([s3])
      })
    )

    it.effect("another agent's purchase keyed like the session reopens nothing; an unknown session, nothing", () =>
      Effect.gen(function* () {
        const store = yield* AcpOrderNoticeStore
        const [s, agent] = [`cs_${unique()}`, `agt_${unique()}`]
        const done = { ...notice(s, agent, FAR), nextAttemptAt: null, doneAt: iso(FAR), notifiedStatus: "completed" }
        yield* store.insert(done)
        yield* store.reopen(s, `agt_${unique()}`, iso(FAR + 1_000))
        expect(yield* store.get(s)).toEqual(done)
        yield* store.reopen(`cs_${unique()}`, agent, iso(FAR + 1_000))
        expect(yield* store.get(`cs_missing_${unique()}`)).toBeUndefined()
      })
    )
  }
)
