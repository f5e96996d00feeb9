// Project creation on every storage: the plan's quota (also under concurrent creates), refusals for
// missing credits or bad input leaving nothing behind, another agent's project not found.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { NotFound } from "../../src/schema/platform/errors.js"
import { InsufficientFunds, walletAccount } from "../../src/schema/ledger/ledger.js"
import { ProjectQuotaExceeded } from "../../src/schema/projects/builder.js"
import { Builder } from "../../src/services/projects/Builder.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { input, samples } from "../fixtures/builderInputs.js"
import { owner, buildEvents, projectSuite } from "../fixtures/projects.js"

projectSuite("project creation and quota", (it) => {
  it.effect("quota: Starter allows 1 project, Pro 5, no plan 1, Scale unlimited", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const body = { name: "P", templateId: "habit-planner" }
      const starter = yield* owner({ plan: "starter", credits: 10_000 })
      yield* builder.create(starter.owner, body)
      const e1 = yield* Effect.flip(builder.create(starter.owner, body))
      expect(e1).toBeInstanceOf(ProjectQuotaExceeded)
      expect(e1).toMatchObject({ planId: "starter", limit: 1, used: 1 })
      expect(e1.message).toBe(
        "the Starter plan allows 1 project and this account has 1; upgrade the plan to create more"
      )

      const pro = yield* owner({ plan: "pro", credits: 10_000 })
      for (let i = 0; i < 5; i++) yield* builder.create(pro.owner, body)
      const e2 = yield* Effect.flip(builder.create(pro.owner, body))
      expect(e2).toMatchObject({ _tag: "ProjectQuotaExceeded", planId: "pro", limit: 5, used: 5 })
      expect(e2.message).toMatch(/^the Pro plan allows 5 projects and this account has 5/)

      const none = yield* owner({ credits: 10_000 })
      yield* builder.create(none.owner, body)
      expect(yield* Effect.flip(builder.create(none.owner, body))).toMatchObject({ planId: null, limit: 1, used: 1 })

      const scale = yield* owner({ plan: "scale", credits: 10_000 })
      for (let i = 0; i < 7; i++) yield* builder.create(scale.owner, body)
      // Nothing was charged for the refused attempts.
      expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(starter.agentId)))).toBe(9_900)
    })
  )

  it.effect("quota holds under concurrent creates (Pro: 12 racing, exactly 5 succeed)", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const pro = yield* owner({ plan: "pro", credits: 10_000 })
      const results = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i),
        (i) => Effect.result(builder.create(pro.owner, { name: `P${i}`, templateId: "habit-planner" })),
        { concurrency: "unbounded" }
      )
      expect(results.filter((r) => r._tag === "Success")).toHaveLength(5)
      expect(results.filter((r) => r._tag === "Failure" && r.failure._tag === "ProjectQuotaExceeded")).toHaveLength(7)
      expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(pro.agentId)))).toBe(10_000 - 5 * 100)
    })
  )

  it.effect("creation is refused without credits (402) and with bad input (400), leaving nothing behind", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const poor = yield* owner({ plan: "starter", credits: 99 })
      const e = yield* Effect.flip(builder.create(poor.owner, { name: "P", templateId: "habit-planner" }))
      expect(e).toBeInstanceOf(InsufficientFunds)
      expect(e).toMatchObject({ balanceCents: 99, requiredCents: 100, missingCents: 1 })
      expect(yield* buildEvents(poor.agentId)).toEqual([])
      const rich = yield* owner({ plan: "starter", credits: 1000 })
      const bad = yield* Effect.flip(
        builder.create(rich.owner, {
          name: "P",
          templateId: "habit-planner",
          inputs: [input("text", "text/plain", "ok"), input("image", "image/gif", samples.png)]
        })
      )
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "inputs[1].content" })
      expect(
        yield* Effect.flip(builder.create(rich.owner, { name: "P", templateId: "no-such-template" }))
      ).toMatchObject({
        _tag: "InvalidInput",
        field: "templateId"
      })
      expect(yield* Effect.flip(builder.create(rich.owner, { name: "P", description: "short" }))).toMatchObject({
        field: "description"
      })
      // Still the full quota and balance.
      yield* builder.create(rich.owner, { name: "P", templateId: "habit-planner" })
      expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(rich.agentId)))).toBe(900)
    })
  )

  it.effect("another agent's project is not found, even in the same account", () =>
    Effect.gen(function* () {
      const builder = yield* Builder
      const keys = yield* Keys
      const o = yield* owner({ plan: "pro", credits: 1000 })
      const p = yield* builder.create(o.owner, { name: "Mine", templateId: "habit-planner" })
      const sibling = yield* keys.createAgent(o.accountId, { name: "sibling" })
      expect(yield* Effect.flip(builder.status(sibling.id, p.id))).toBeInstanceOf(NotFound)
      expect(yield* Effect.flip(builder.status(o.agentId, "prj_missing"))).toBeInstanceOf(NotFound)
    })
  )
})
