// The project catalogue on every storage: the seeded projects, filters, sorts and keyset pages,
// detail with the 85/15 revenue share, and the evaluation rule's pinned numbers (docs/evaluation.md).
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { NotFound } from "../../src/schema/platform/errors.js"
import { Projects } from "../../src/services/projects/Projects.js"
import { projectSuite } from "../fixtures/projects.js"

projectSuite("project catalogue", (it) => {
  it.effect("the catalog lists the 20 seeded projects, newest first by default", () =>
    Effect.gen(function* () {
      const projects = yield* Projects
      const page = yield* projects.listCatalog({ limit: 100 })
      expect(page.data).toHaveLength(20)
      expect(page.nextCursor).toBeNull()
      expect(page.data.slice(0, 3).map((p) => p.id)).toEqual(["prj_resumo_reuniao", "prj_indica_ai", "prj_resolve_bot"])
      const zap = page.data.find((p) => p.id === "prj_zapleads")!
      expect(zap).toMatchObject({
        category: "Communication",
        rating: 4.7,
        askingPriceCents: 14900000,
        currency: "usd",
        templateId: "whatsapp-crm-bot"
      })
      expect(zap.metrics).toMatchObject({
        mrrCents: 620000,
        monthlyGrowthPct: 14,
        activeUsers: 1840,
        churnPct: 3.1,
        ageMonths: 18
      })
    })
  )

  it.effect("filters by category, price range, rating and text; sorts both ways", () =>
    Effect.gen(function* () {
      const projects = yield* Projects
      const ids = (f: Parameters<typeof projects.listCatalog>[0]) =>
        Effect.map(projects.listCatalog({ limit: 100, ...f }), (p) => p.data.map((x) => x.id))
      expect(yield* ids({ category: "Communication", sort: "price" })).toEqual([
        "prj_inboxly",
        "prj_clinica_zap",
        "prj_zapleads"
      ])
      expect(yield* ids({ minPriceCents: 1_000_000, maxPriceCents: 2_500_000, sort: "price" })).toEqual([
        "prj_docsmith",
        "prj_clinica_zap",
        "prj_rankwriter",
        "prj_logoly"
      ])
      expect(yield* ids({ minRating: 4.8, sort: "rating" })).toEqual([
        "prj_pr_sentinel",
        "prj_resolve_bot",
        "prj_helpdesk_genie"
      ])
      expect(yield* ids({ q: "WHATSAPP" })).toEqual(["prj_clinica_zap", "prj_zapleads"])
      expect(yield* ids({ q: "Mariana" })).toEqual(["prj_zapleads"])
      expect((yield* ids({ sort: "mrr" })).slice(0, 3)).toEqual([
        "prj_helpdesk_genie",
        "prj_pr_sentinel",
        "prj_zapleads"
      ])
      expect((yield* ids({ sort: "growth", order: "desc" })).slice(0, 2)).toEqual([
        "prj_edgeship",
        "prj_resumo_reuniao"
      ])
      expect((yield* ids({ sort: "growth", order: "asc" })).slice(0, 3)).toEqual([
        "prj_rankwriter",
        "prj_carteira_viva",
        "prj_inboxly"
      ])
      // Ties (three zero-MRR projects) are broken by id, in the sort's direction.
      expect((yield* ids({ sort: "mrr", order: "asc" })).slice(0, 3)).toEqual([
        "prj_habitly",
        "prj_indica_ai",
        "prj_resolve_bot"
      ])
      expect(yield* ids({ q: "no such thing" })).toEqual([])
      const bad = yield* Effect.flip(projects.listCatalog({ minPriceCents: 10, maxPriceCents: 5 }))
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "minPriceCents" })
    })
  )

  it.effect("keyset pages cover every row once, in the same order, for every sort", () =>
    Effect.gen(function* () {
      const projects = yield* Projects
      for (const sort of ["price", "rating", "mrr", "growth", "newest"] as const) {
        for (const order of ["asc", "desc"] as const) {
          const all = (yield* projects.listCatalog({ sort, order, limit: 100 })).data.map((p) => p.id)
          const paged: Array<string> = []
          let cursor: string | undefined
          let pages = 0
          do {
            const page = yield* projects.listCatalog({ sort, order, limit: 6, cursor })
            paged.push(...page.data.map((p) => p.id))
            cursor = page.nextCursor ?? undefined
            pages++
          } while (cursor)
          expect(paged, `${sort} ${order}`).toEqual(all)
          expect(pages).toBe(4)
        }
      }
      const first = yield* projects.listCatalog({ sort: "price", limit: 5 })
      const mismatch = yield* Effect.flip(projects.listCatalog({ sort: "mrr", limit: 5, cursor: first.nextCursor! }))
      expect(mismatch).toMatchObject({ _tag: "InvalidInput", field: "cursor" })
      const garbage = yield* Effect.flip(projects.listCatalog({ cursor: "%%%not-a-cursor" }))
      expect(garbage).toMatchObject({ _tag: "InvalidInput", field: "cursor" })
    })
  )

  it.effect("detail shows metrics, template, creator, price and the 85/15 revenue share", () =>
    Effect.gen(function* () {
      const projects = yield* Projects
      const d = yield* projects.getCatalogProject("prj_zapleads")
      expect(d.template.id).toBe("whatsapp-crm-bot")
      expect(d.template.name).toBe("WhatsApp CRM Bot")
      expect(d.creator).toEqual({ name: "Mariana Costa", revenueSharePercent: 85 })
      expect(d.price).toEqual({ askingPriceCents: 14900000, currency: "usd" })
      expect(d.revenueShare).toEqual({ creator: "85%", platform: "15%", creatorPercent: 85, platformPercent: 15 })
      expect(d.annualRevenueCents).toBe(7440000)
      expect(d.revenueMultiple).toBe(2)
      expect(d.techStack).toContain("WhatsApp Cloud API")
      expect((yield* projects.getCatalogProject("prj_resolve_bot")).revenueMultiple).toBeNull()
      expect(yield* Effect.flip(projects.getCatalogProject("prj_nope"))).toBeInstanceOf(NotFound)
    })
  )

  it.effect("evaluation follows the documented rule (docs/evaluation.md)", () =>
    Effect.gen(function* () {
      const projects = yield* Projects
      const expected: Record<string, [number, string]> = {
        prj_helpdesk_genie: [97, "strong_buy"],
        prj_zapleads: [82, "strong_buy"],
        prj_flowpilot: [75, "strong_buy"],
        prj_cobranca_facil: [74, "buy"],
        prj_edgeship: [62, "buy"],
        prj_resumo_reuniao: [60, "buy"],
        prj_clinica_zap: [53, "hold"],
        prj_kit_marca: [41, "hold"],
        prj_inboxly: [30, "avoid"],
        prj_resolve_bot: [1, "avoid"]
      }
      for (const [id, [score, recommendation]] of Object.entries(expected)) {
        const e = yield* projects.evaluate(id)
        expect([e.score, e.recommendation], id).toEqual([score, recommendation])
        expect(e.reasons.reduce((s, r) => s + r.points, 0)).toBe(score)
        expect(e.evaluator).toBe("rules-v1")
      }
      const zap = yield* projects.evaluate("prj_zapleads")
      expect(zap.reasons.map((r) => [r.factor, r.points, r.maxPoints])).toEqual([
        ["revenue", 25, 30],
        ["growth", 20, 25],
        ["churn", 15, 20],
        ["valuation", 12, 15],
        ["traction", 5, 5],
        ["maturity", 5, 5]
      ])
      expect(zap.reasons[0].detail).toBe("MRR $6,200.00")
      expect(zap.reasons[3].detail).toBe("asking $149,000.00 is 2.00× annual revenue")
      expect(yield* Effect.flip(projects.evaluate("prj_nope"))).toBeInstanceOf(NotFound)
    })
  )
})
