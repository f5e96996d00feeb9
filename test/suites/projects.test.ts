// Projects suite, run on memory and Postgres: the catalog (filters, sort, keyset pages), the
// evaluation rule's pinned numbers, the builder (quota, credits, state machine, triggered failure,
// refund, events, worker claim) and sessions (step contract, expiry, ownership). Input checks are
// pure and tested once.
import { FakeProcessorLive } from "../../src/layers/payments/fake.js"
import { Knowledge } from "../../src/services/Knowledge.js"
import { Payments } from "../../src/services/Payments.js"
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, it as vit } from "vitest"
import { seedCatalog } from "../../src/layers/seed.js"
import { InvalidInput, NotFound } from "../../src/schema/errors.js"
import { EXTERNAL_GRANTS, InsufficientFunds, walletAccount } from "../../src/schema/ledger.js"
import { type ProjectInput, ProjectQuotaExceeded, SessionExpired } from "../../src/schema/projects.js"
import { Builder, STEP_MS } from "../../src/services/Builder.js"
import { checkInput, checkInputs, parseCsv } from "../../src/services/BuilderInputs.js"
import type { Caller } from "../../src/services/Caller.js"
import { Ids } from "../../src/services/Db.js"
import { Events } from "../../src/services/Events.js"
import { Keys } from "../../src/services/Keys.js"
import { Ledger } from "../../src/services/Ledger.js"
import { Marketplace } from "../../src/services/Marketplace.js"
import { Projects, seedCatalogProjects } from "../../src/services/Projects.js"
import { ProjectServicesLive } from "../../src/services/index.js"
import { Sessions } from "../../src/services/Sessions.js"
import type { Permission } from "../../src/schema/keys.js"
import { forEachStorage } from "../fixtures/suite.js"

// ---------------------------------------------------------------------------------------------
// Input checks (pure)

const b64 = (bytes: ReadonlyArray<number> | string) => Buffer.from(typeof bytes === "string" ? Buffer.from(bytes, "latin1") : Uint8Array.from(bytes)).toString("base64")
const pad = (head: ReadonlyArray<number>) => [...head, ...Array.from({ length: 32 }, (_, i) => i)]
const samples = {
  png: b64(pad([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  jpeg: b64(pad([0xff, 0xd8, 0xff, 0xe0])),
  gif: b64("GIF89a" + "\u0000".repeat(20)),
  webp: b64("RIFF\u0010\u0000\u0000\u0000WEBPVP8 " + "\u0000".repeat(16)),
  pdf: b64("%PDF-1.7\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n"),
  wav: b64("RIFF\u0024\u0000\u0000\u0000WAVEfmt " + "\u0000".repeat(24)),
  mp3id3: b64("ID3\u0004\u0000\u0000" + "\u0000".repeat(20)),
  mp3sync: b64(pad([0xff, 0xfb, 0x90, 0x64])),
  ogg: b64("OggS\u0000\u0002" + "\u0000".repeat(20)),
  webm: b64(pad([0x1a, 0x45, 0xdf, 0xa3])),
  m4a: b64("\u0000\u0000\u0000\u0020ftypM4A " + "\u0000".repeat(20))
}
const input = (kind: ProjectInput["kind"], mediaType: string, content: string, encoding?: "text" | "base64"): ProjectInput => ({
  kind,
  mediaType,
  content,
  ...(encoding ? { encoding } : {})
})

describe("builder inputs", () => {
  vit("accepts each of the five kinds in every supported format, and reports what it found", () => {
    const ok: Array<[ProjectInput, string]> = [
      [input("text", "text/plain", "Build a WhatsApp CRM for dentists"), "text, 33 characters"],
      [input("text", "text/markdown", b64("# Title\n\nbody"), "base64"), "text, 13 characters"],
      [input("csv", "text/csv", 'name,price\n"Widget, large",10\n"say ""hi""",2\n'), "CSV, 2 columns × 2 data rows"],
      [input("csv", "text/csv; charset=utf-8", "a\r\n1\r\n"), "CSV, 1 column × 1 data row"],
      [input("image", "image/png", samples.png), "PNG image"],
      [input("image", "image/jpeg", samples.jpeg), "JPEG image"],
      [input("image", "image/gif", samples.gif), "GIF image"],
      [input("image", "image/webp", samples.webp), "WebP image"],
      [input("pdf", "application/pdf", samples.pdf), "PDF document"],
      [input("voice", "audio/wav", samples.wav), "WAV audio"],
      [input("voice", "audio/mpeg", samples.mp3id3), "MP3 audio"],
      [input("voice", "audio/mpeg", samples.mp3sync), "MP3 audio"],
      [input("voice", "audio/ogg", samples.ogg), "Ogg audio"],
      [input("voice", "audio/webm", samples.webm), "WebM audio"],
      [input("voice", "audio/x-m4a", samples.m4a), "MP4/M4A audio"]
    ]
    for (const [i, detected] of ok) {
      const r = checkInput(i, 0)
      expect(r, `${i.kind} ${i.mediaType}`).not.toBeInstanceOf(InvalidInput)
      expect((r as { detected: string }).detected).toBe(detected)
    }
    const png = checkInput(input("image", "image/png", samples.png), 3) as { bytes: number; sha256: string; index: number }
    expect(png.bytes).toBe(40)
    expect(png.index).toBe(3)
    expect(png.sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  vit("refuses what is not what it claims, naming the input and field", () => {
    const bad: Array<[ProjectInput, string, RegExp]> = [
      [input("image", "image/png", samples.pdf), "inputs[2].content", /declared image\/png but the bytes are PDF document/],
      [input("image", "image/jpeg", samples.png), "inputs[2].content", /are PNG image/],
      [input("pdf", "application/pdf", samples.png), "inputs[2].content", /are PNG image/],
      [input("voice", "audio/wav", samples.webp), "inputs[2].content", /are WebP image/],
      [input("voice", "audio/ogg", b64("hello world, not audio")), "inputs[2].content", /match no voice format \(starts 68 65 6c 6c 6f 20 77 6f\)/],
      [input("image", "image/svg+xml", samples.png), "inputs[2].mediaType", /image inputs accept image\/png, image\/jpeg, image\/gif, image\/webp/],
      [input("voice", "audio/flac", samples.wav), "inputs[2].mediaType", /voice inputs accept/],
      [input("pdf", "application/pdf", "%PDF-1.7", "text"), "inputs[2].encoding", /must be sent base64-encoded/],
      [input("image", "image/png", "not base64!"), "inputs[2].content", /not valid base64/],
      [input("csv", "text/csv", "a,b\n1,2\n3\n"), "inputs[2].content", /CSV row 3 has 1 columns; the header has 2/],
      [input("csv", "text/csv", 'a,b\n"open,2\n'), "inputs[2].content", /unterminated quoted field/],
      [input("csv", "text/csv", "a,b\n"), "inputs[2].content", /header row and at least one data row/],
      [input("text", "text/plain", "   \n "), "inputs[2].content", /blank/],
      [input("text", "text/plain", b64([0xc3, 0x28]), "base64"), "inputs[2].content", /not valid UTF-8/],
      [input("text", "text/plain", ""), "inputs[2].content", /empty/],
      [input("text", "text/plain", "x".repeat(64 * 1024 + 1)), "inputs[2].content", /65537 bytes; text inputs are limited to 65536 bytes/]
    ]
    for (const [i, field, message] of bad) {
      const r = checkInput(i, 2)
      expect(r, `${i.kind} ${i.mediaType}`).toBeInstanceOf(InvalidInput)
      expect((r as InvalidInput).field).toBe(field)
      expect((r as InvalidInput).message).toMatch(message)
    }
  })

  vit("limits the count and the total size", () => {
    const many = Array.from({ length: 11 }, () => input("text", "text/plain", "hello"))
    expect((checkInputs(many) as InvalidInput).field).toBe("inputs")
    const big = b64("%PDF-" + "x".repeat(400 * 1024))
    const r = checkInputs([input("pdf", "application/pdf", big), input("pdf", "application/pdf", big)])
    expect(r).toBeInstanceOf(InvalidInput)
    expect((r as InvalidInput).field).toBe("inputs[1].content")
    expect((r as InvalidInput).message).toMatch(/together over 786432 bytes/)
  })

  vit("parses RFC 4180 CSV", () => {
    expect(parseCsv('a,"b ""q""",c\r\n1,"x\ny",3\n\n')).toEqual([
      ["a", 'b "q"', "c"],
      ["1", "x\ny", "3"]
    ])
    expect(() => parseCsv('a,"b"c\n')).toThrow(/after a closing quote/)
  })
})

// ---------------------------------------------------------------------------------------------
// Service suite, per storage layer

const allPermissions: ReadonlyArray<Permission> = ["catalog:read", "evaluate", "acquire", "invest", "create"]

/** An account with one agent (optionally on a plan) and a funded wallet. */
const owner = (options: { plan?: "starter" | "pro" | "scale"; credits?: number } = {}) =>
  Effect.gen(function* () {
    const keys = yield* Keys
    const ledger = yield* Ledger
    const ids = yield* Ids
    const account = yield* keys.signUp({ email: `${yield* ids.make("o")}@example.com`.toLowerCase(), password: "correct horse battery", name: "Owner" })
    if (options.plan) yield* keys.setAccountPlan(account.id, options.plan)
    const agent = yield* keys.createAgent(account.id, { name: "builder-bot" })
    if ((options.credits ?? 0) > 0) {
      yield* ledger.transfer({ kind: "grant", reference: `fund-${agent.id}`, from: EXTERNAL_GRANTS, to: walletAccount(agent.id), amount: options.credits! })
    }
    const caller: Caller = { accountId: account.id, agentId: agent.id, keyId: "key_test", permissions: new Set(allPermissions), via: "key" }
    return { accountId: account.id, agentId: agent.id, caller, owner: { accountId: account.id, agentId: agent.id } }
  })

const buildEvents = (agentId: string) =>
  Effect.map(Effect.flatMap(Events, (e) => e.listForAgent(agentId, 100)), (list) =>
    list
      .filter((e) => e.type === "build.status_changed")
      .reverse()
      .map((e) => e.data as { projectId: string; status: string; previousStatus: string | null; progressPercent: number })
  )

forEachStorage(
  "projects",
  (storage) =>
    Layer.effectDiscard(Effect.andThen(seedCatalog, seedCatalogProjects)).pipe(
      Layer.provideMerge(ProjectServicesLive),
      Layer.provideMerge(Payments.layer),
      Layer.provideMerge(FakeProcessorLive),
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, Events.layer, Keys.layer, Marketplace.layer, Knowledge.layer)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    it.effect("the catalog lists the 20 seeded projects, newest first by default", () =>
      Effect.gen(function* () {
        const projects = yield* Projects
        const page = yield* projects.listCatalog({ limit: 100 })
        expect(page.data).toHaveLength(20)
        expect(page.nextCursor).toBeNull()
        expect(page.data.slice(0, 3).map((p) => p.id)).toEqual(["prj_resumo_reuniao", "prj_indica_ai", "prj_resolve_bot"])
        const zap = page.data.find((p) => p.id === "prj_zapleads")!
        expect(zap).toMatchObject({ category: "Communication", rating: 4.7, askingPriceCents: 14900000, currency: "usd", templateId: "whatsapp-crm-bot" })
        expect(zap.metrics).toMatchObject({ mrrCents: 620000, monthlyGrowthPct: 14, activeUsers: 1840, churnPct: 3.1, ageMonths: 18 })
      })
    )

    it.effect("filters by category, price range, rating and text; sorts both ways", () =>
      Effect.gen(function* () {
        const projects = yield* Projects
        const ids = (f: Parameters<typeof projects.listCatalog>[0]) => Effect.map(projects.listCatalog({ limit: 100, ...f }), (p) => p.data.map((x) => x.id))
        expect(yield* ids({ category: "Communication", sort: "price" })).toEqual(["prj_inboxly", "prj_clinica_zap", "prj_zapleads"])
        expect(yield* ids({ minPriceCents: 1_000_000, maxPriceCents: 2_500_000, sort: "price" })).toEqual([
          "prj_docsmith",
          "prj_clinica_zap",
          "prj_rankwriter",
          "prj_logoly"
        ])
        expect(yield* ids({ minRating: 4.8, sort: "rating" })).toEqual(["prj_pr_sentinel", "prj_resolve_bot", "prj_helpdesk_genie"])
        expect(yield* ids({ q: "WHATSAPP" })).toEqual(["prj_clinica_zap", "prj_zapleads"])
        expect(yield* ids({ q: "Mariana" })).toEqual(["prj_zapleads"])
        expect((yield* ids({ sort: "mrr" })).slice(0, 3)).toEqual(["prj_helpdesk_genie", "prj_pr_sentinel", "prj_zapleads"])
        expect((yield* ids({ sort: "growth", order: "desc" })).slice(0, 2)).toEqual(["prj_edgeship", "prj_resumo_reuniao"])
        expect((yield* ids({ sort: "growth", order: "asc" })).slice(0, 3)).toEqual(["prj_rankwriter", "prj_carteira_viva", "prj_inboxly"])
        // Ties (three zero-MRR projects) are broken by id, in the sort's direction.
        expect((yield* ids({ sort: "mrr", order: "asc" })).slice(0, 3)).toEqual(["prj_habitly", "prj_indica_ai", "prj_resolve_bot"])
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
        expect(created.build).toMatchObject({ status: "queued", progressPercent: 0, failureReason: null, finishedAt: null, simulated: true })
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
        expect(live.build.steps.map((s) => s.status)).toEqual(["queued", "analyzing", "generating", "building", "deploying", "live"])
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
        const p = yield* builder.create(o.owner, { name: "Doomed", description: "A CRM that will not build [fail:building]" })
        expect(p.costCents).toBe(100)
        expect(yield* ledger.balance(walletAccount(o.agentId))).toBe(900)
        let status = p.build.status
        while (status !== "failed" && status !== "live") status = (yield* builder.advance(p.id)).build.status
        const failed = yield* builder.status(o.agentId, p.id)
        expect(failed.build.status).toBe("failed")
        expect(failed.build.progressPercent).toBe(60)
        expect(failed.build.failureReason).toBe("the building step failed (simulated failure requested for this build)")
        expect(failed.build.steps.map((s) => s.status)).toEqual(["queued", "analyzing", "generating", "building", "failed"])
        expect(yield* ledger.balance(walletAccount(o.agentId))).toBe(1000)
        expect((yield* ledger.entriesByReference(p.id)).map((e) => e.kind)).toEqual(["project_creation", "refund"])
        expect((yield* buildEvents(o.agentId)).map((e) => e.status)).toEqual(["queued", "analyzing", "generating", "building", "failed"])
        // The failed build does not count: the Starter account may still create its one project.
        const again = yield* builder.create(o.owner, { name: "Second try", templateId: "habit-planner", simulateFailure: "analyzing" })
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

    it.effect("quota: Starter allows 1 project, Pro 5, no plan 1, Scale unlimited", () =>
      Effect.gen(function* () {
        const builder = yield* Builder
        const body = { name: "P", templateId: "habit-planner" }
        const starter = yield* owner({ plan: "starter", credits: 10_000 })
        yield* builder.create(starter.owner, body)
        const e1 = yield* Effect.flip(builder.create(starter.owner, body))
        expect(e1).toBeInstanceOf(ProjectQuotaExceeded)
        expect(e1).toMatchObject({ planId: "starter", limit: 1, used: 1 })
        expect(e1.message).toBe("the Starter plan allows 1 project and this account has 1; upgrade the plan to create more")

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
          builder.create(rich.owner, { name: "P", templateId: "habit-planner", inputs: [input("text", "text/plain", "ok"), input("image", "image/gif", samples.png)] })
        )
        expect(bad).toMatchObject({ _tag: "InvalidInput", field: "inputs[1].content" })
        expect(yield* Effect.flip(builder.create(rich.owner, { name: "P", templateId: "no-such-template" }))).toMatchObject({
          _tag: "InvalidInput",
          field: "templateId"
        })
        expect(yield* Effect.flip(builder.create(rich.owner, { name: "P", description: "short" }))).toMatchObject({ field: "description" })
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

    it.effect("a session keeps state: start → browse → evaluate → create, with the step contract enforced", () =>
      Effect.gen(function* () {
        const sessions = yield* Sessions
        const o = yield* owner({ plan: "starter", credits: 1000 })
        const started = yield* sessions.step(o.caller, { action: "start", goal: "create" })
        const id = started.session.id
        expect(started.session).toMatchObject({ state: "started", goal: "create", nextActions: ["browse", "evaluate", "create", "close"], expired: false })
        expect(Date.parse(started.session.expiresAt) - Date.parse(started.session.createdAt)).toBe(30 * 60 * 1000)
        const early = yield* Effect.flip(sessions.step(o.caller, { action: "acquire", sessionId: id }))
        expect(early).toMatchObject({ _tag: "Conflict", state: "started" })
        const browsed = yield* sessions.step(o.caller, { action: "browse", sessionId: id, filters: { category: "Communication", sort: "price" } })
        expect(browsed.result).toMatchObject({ action: "browse" })
        expect(browsed.session.context.browsedProjectIds).toEqual(["prj_inboxly", "prj_clinica_zap", "prj_zapleads"])
        expect(browsed.session.state).toBe("browsing")
        yield* TestClock.adjust(10 * 60 * 1000)
        const evaluated = yield* sessions.step(o.caller, { action: "evaluate", sessionId: id, projectId: "prj_zapleads" })
        expect(evaluated.session.state).toBe("evaluated")
        expect(evaluated.session.nextActions).toContain("acquire")
        expect(evaluated.session.context.evaluations).toEqual([{ projectId: "prj_zapleads", score: 82, recommendation: "strong_buy" }])
        // The expiry slides with each step.
        expect(Date.parse(evaluated.session.expiresAt) - Date.parse(started.session.createdAt)).toBe(10 * 60 * 1000 + 30 * 60 * 1000)
        const created = yield* sessions.step(o.caller, { action: "create", sessionId: id, project: { name: "My CRM", templateId: "whatsapp-crm-bot" } })
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
        expect(yield* Effect.flip(sessions.step(other.caller, { action: "browse", sessionId: session.id }))).toBeInstanceOf(NotFound)
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
        const e = yield* Effect.flip(sessions.step(readOnly, { action: "evaluate", sessionId: session.id, projectId: "prj_zapleads" }))
        expect(e).toMatchObject({ _tag: "Forbidden", permission: "evaluate" })
        const closed = yield* sessions.step(readOnly, { action: "close", sessionId: session.id })
        expect(closed.session.state).toBe("closed")
      })
    )
  }
)
