// Builder sessions on every storage: the step contract, expiry 30 minutes after the last step,
// ownership, a permission per step.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { NotFound } from "../../src/schema/platform/errors.js"
import { SessionExpired } from "../../src/schema/sessions/sessions.js"
import type { Caller } from "../../src/services/keys/Caller.js"
import { Sessions } from "../../src/services/sessions/Sessions.js"
import type { Permission } from "../../src/schema/keys/keys.js"
import { owner, projectSuite } from "../fixtures/projects.js"

projectSuite("builder sessions", (it) => {
  it.effect("a session keeps state: start → browse → evaluate → create, with the step contract enforced", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const o = yield* owner({ plan: "starter", credits: 1000 })
      const started = yield* sessions.step(o.caller, { action: "start", goal: "create" })
      const id = started.session.id
      expect(started.session).toMatchObject({
        state: "started",
        goal: "create",
        nextActions: ["browse", "evaluate", "create", "close"],
        expired: false
      })
      expect(Date.parse(started.session.expiresAt) - Date.parse(started.session.createdAt)).toBe(30 * 60 * 1000)
      const early = yield* Effect.flip(sessions.step(o.caller, { action: "acquire", sessionId: id }))
      expect(early).toMatchObject({ _tag: "Conflict", state: "started" })
      const browsed = yield* sessions.step(o.caller, {
        action: "browse",
        sessionId: id,
        filters: { category: "Communication", sort: "price" }
      })
      expect(browsed.result).toMatchObject({ action: "browse" })
      expect(browsed.session.context.browsedProjectIds).toEqual(["prj_inboxly", "prj_clinica_zap", "prj_zapleads"])
      expect(browsed.session.state).toBe("browsing")
      yield* TestClock.adjust(10 * 60 * 1000)
      const evaluated = yield* sessions.step(o.caller, { action: "evaluate", sessionId: id, projectId: "prj_zapleads" })
      expect(evaluated.session.state).toBe("evaluated")
      expect(evaluated.session.nextActions).toContain("acquire")
      expect(evaluated.session.context.evaluations).toEqual([
        { projectId: "prj_zapleads", score: 82, recommendation: "strong_buy" }
      ])
      // The expiry slides with each step.
      expect(Date.parse(evaluated.session.expiresAt) - Date.parse(started.session.createdAt)).toBe(
        10 * 60 * 1000 + 30 * 60 * 1000
      )
      const created = yield* sessions.step(o.caller, {
        action: "create",
        sessionId: id,
        project: { name: "My CRM", templateId: "whatsapp-crm-bot" }
      })
      expect(created.session.state).toBe("completed")
      expect(created.session.nextActions).toEqual([])
      const projectId = (created.result as { project: { id: string } }).project.id
      expect(created.session.context.outcome).toEqual({ type: "project", projectId, buildStatus: "queued" })
      expect(created.session.steps.map((s) => s.action)).toEqual(["start", "browse", "evaluate", "create"])
      const after = yield* Effect.flip(sessions.step(o.caller, { action: "browse", sessionId: id }))
      expect(after).toMatchObject({ _tag: "Conflict", state: "completed" })
      const read = yield* sessions.get(o.agentId, id)
      expect(read.steps).toHaveLength(4)
    })
  )

  it.effect("sessions expire 30 minutes after the last step, and belong to their agent", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const o = yield* owner()
      const other = yield* owner()
      const { session } = yield* sessions.step(o.caller, { action: "start" })
      expect(session.goal).toBe("explore")
      expect(yield* Effect.flip(sessions.get(other.agentId, session.id))).toBeInstanceOf(NotFound)
      expect(
        yield* Effect.flip(sessions.step(other.caller, { action: "browse", sessionId: session.id }))
      ).toBeInstanceOf(NotFound)
      yield* TestClock.adjust(30 * 60 * 1000)
      const e = yield* Effect.flip(sessions.step(o.caller, { action: "browse", sessionId: session.id }))
      expect(e).toBeInstanceOf(SessionExpired)
      expect(e).toMatchObject({ sessionId: session.id, expiredAt: session.expiresAt })
      const read = yield* sessions.get(o.agentId, session.id)
      expect(read).toMatchObject({ expired: true, nextActions: [] })
    })
  )

  it.effect("each session step needs its permission", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const o = yield* owner()
      const readOnly: Caller = { ...o.caller, permissions: new Set<Permission>(["catalog:read"]) }
      const { session } = yield* sessions.step(readOnly, { action: "start" })
      yield* sessions.step(readOnly, { action: "browse", sessionId: session.id })
      const e = yield* Effect.flip(
        sessions.step(readOnly, { action: "evaluate", sessionId: session.id, projectId: "prj_zapleads" })
      )
      expect(e).toMatchObject({ _tag: "Forbidden", permission: "evaluate" })
      const closed = yield* sessions.step(readOnly, { action: "close", sessionId: session.id })
      expect(closed.session.state).toBe("closed")
    })
  )
})
