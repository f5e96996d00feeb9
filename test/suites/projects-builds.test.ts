// Project builds on every storage: the state machine to live charging credits once, a triggered
// failure refunding them and freeing the quota, the worker advancing only due builds (TestClock).
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { Builder } from "../../src/services/projects/Builder.js"
import { STEP_MS } from "../../src/services/projects/buildRules.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { input, samples } from "../fixtures/builderInputs.js"
import { owner, buildEvents, projectSuite } from "../fixtures/projects.js"

projectSuite("project builds", (it) => {
  it.effect("a build runs queued → analyzing → generating → building → deploying → live, charging credits once", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const ledger = yield* Ledger
      const o = yield* owner({ plan: "starter", credits: 500 })
      const created = yield* builder.create(o.owner, {
        name: "Dental CRM",
        templateId: "whatsapp-crm-bot",
        inputs: [input("text", "text/plain", "Remind patients"), input("image", "image/png", samples.png)]
      })
      expect(created.costCents).toBe(140)
      expect(yield* ledger.balance(walletAccount(o.agentId))).toBe(360)
      expect(created.build).toMatchObject({
        status: "queued",
        progressPercent: 0,
        failureReason: null,
        finishedAt: null,
        simulated: true
      })
      expect(created.inputs.map((i) => i.detected)).toEqual(["text, 15 characters", "PNG image"])
      const seen: Array<[string, number]> = []
      for (let i = 0; i < 5; i++) {
        const p = yield* builder.advance(created.id)
        seen.push([p.build.status, p.build.progressPercent])
      }
      expect(seen).toEqual([
        ["analyzing", 20],
        ["generating", 40],
        ["building", 60],
        ["deploying", 80],
        ["live", 100]
      ])
      const live = yield* builder.status(o.agentId, created.id)
      expect(live.build.steps.map((s) => s.status)).toEqual([
        "queued",
        "analyzing",
        "generating",
        "building",
        "deploying",
        "live"
      ])
      expect(live.build.steps[1].message).toBe("Analyzing text, 15 characters; PNG image")
      expect(live.build.finishedAt).not.toBeNull()
      // Terminal: advancing again changes nothing and emits nothing.
      expect((yield* builder.advance(created.id)).build.status).toBe("live")
      const events = yield* buildEvents(o.agentId)
      expect(events.map((e) => [e.previousStatus, e.status, e.progressPercent])).toEqual([
        [null, "queued", 0],
        ["queued", "analyzing", 20],
        ["analyzing", "generating", 40],
        ["generating", "building", 60],
        ["building", "deploying", 80],
        ["deploying", "live", 100]
      ])
      expect(events.every((e) => e.projectId === created.id)).toBe(true)
      expect((yield* ledger.entriesByReference(created.id)).map((e) => e.kind)).toEqual(["project_creation"])
      expect((yield* ledger.check).ok).toBe(true)
    })
  )

  it.effect("a triggered failure ends in failed with its reason, refunds the credits and frees the quota", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const ledger = yield* Ledger
      const o = yield* owner({ plan: "starter", credits: 1000 })
      const p = yield* builder.create(o.owner, {
        name: "Doomed",
        description: "A CRM that will not build [fail:building]"
      })
      expect(p.costCents).toBe(100)
      expect(yield* ledger.balance(walletAccount(o.agentId))).toBe(900)
      let status = p.build.status
      while (status !== "failed" && status !== "live") status = (yield* builder.advance(p.id)).build.status
      const failed = yield* builder.status(o.agentId, p.id)
      expect(failed.build.status).toBe("failed")
      expect(failed.build.progressPercent).toBe(60)
      expect(failed.build.failureReason).toBe("the building step failed (simulated failure requested for this build)")
      expect(failed.build.steps.map((s) => s.status)).toEqual([
        "queued",
        "analyzing",
        "generating",
        "building",
        "failed"
      ])
      expect(yield* ledger.balance(walletAccount(o.agentId))).toBe(1000)
      expect((yield* ledger.entriesByReference(p.id)).map((e) => e.kind)).toEqual(["project_creation", "refund"])
      expect((yield* buildEvents(o.agentId)).map((e) => e.status)).toEqual([
        "queued",
        "analyzing",
        "generating",
        "building",
        "failed"
      ])
      // The failed build does not count: the Starter account may still create its one project.
      const again = yield* builder.create(o.owner, {
        name: "Second try",
        templateId: "habit-planner",
        simulateFailure: "analyzing"
      })
      expect((yield* builder.advance(again.id)).build.status).toBe("analyzing")
      expect((yield* builder.advance(again.id)).build).toMatchObject({ status: "failed", progressPercent: 20 })
    })
  )

  it.effect("the worker pass advances only due builds, one step per STEP_MS", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const o = yield* owner({ plan: "scale", credits: 1000 })
      const base = yield* builder.runOnce() // anything left due from earlier tests
      expect(base).toBeGreaterThanOrEqual(0)
      const a = yield* builder.create(o.owner, { name: "A", templateId: "logo-forge" })
      expect(yield* builder.runOnce()).toBe(0)
      yield* TestClock.adjust(STEP_MS - 1)
      expect(yield* builder.runOnce()).toBe(0)
      yield* TestClock.adjust(1)
      const b = yield* builder.create(o.owner, { name: "B", templateId: "logo-forge" })
      expect(yield* builder.runOnce()).toBe(1)
      expect((yield* builder.status(o.agentId, a.id)).build.status).toBe("analyzing")
      expect((yield* builder.status(o.agentId, b.id)).build.status).toBe("queued")
      for (let i = 0; i < 12; i++) {
        yield* TestClock.adjust(STEP_MS)
        yield* builder.runOnce()
      }
      expect((yield* builder.status(o.agentId, a.id)).build.status).toBe("live")
      expect((yield* builder.status(o.agentId, b.id)).build.status).toBe("live")
      expect(yield* builder.runOnce()).toBe(0)
    })
  )
})
