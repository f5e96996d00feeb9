// Discovery service suite, run on memory and Postgres: the cached document is reused until its
// inputs change (checked every REVALIDATE_MS), keyed visitors are named without spending rate
// limit, and the User-Agent classification table.
import { describe, expect, it as vit } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { seedCatalog, seedData } from "../../src/layers/seed/seed.js"
import { Template } from "../../src/schema/marketplace/marketplace.js"
import { Ids } from "../../src/services/platform/Db.js"
import type { CatalogRoute, DiscoveryDocument } from "../../src/services/discovery/document.js"
import { Discovery, REVALIDATE_MS } from "../../src/services/discovery/Discovery.js"
import { classifyUserAgent } from "../../src/services/discovery/visitor.js"
import { RuleEvaluatorLive } from "../../src/services/projects/Evaluator.js"
import { Keys } from "../../src/services/keys/Keys.js"
import { Marketplace } from "../../src/services/marketplace/Marketplace.js"
import { MarketplaceStore } from "../../src/services/marketplace/MarketplaceStore.js"
import { forEachStorage } from "../fixtures/suite.js"

const routes: ReadonlyArray<CatalogRoute> = [
  { method: "GET", path: "/api/discover", description: "discovery", auth: "public", permission: null },
  { method: "GET", path: "/api/v1/agent/me", description: "me", auth: "bearer", permission: null },
  { method: "POST", path: "/api/v1/agent/commerce/buy", description: "buy", auth: "bearer", permission: "commerce:buy" }
]

/** The document as served (JSON): the schema's encoded side. */
const decode = (body: Uint8Array) => JSON.parse(new TextDecoder().decode(body)) as typeof DiscoveryDocument.Encoded

forEachStorage(
  "discovery",
  (storage) =>
    Layer.effectDiscard(seedCatalog).pipe(
      Layer.provideMerge(Discovery.layer),
      Layer.provideMerge(Layer.mergeAll(Marketplace.layer, Keys.layer, RuleEvaluatorLive)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    it.effect("serves the same encoded document until templates change, then rebuilds after REVALIDATE_MS", () =>
      Effect.gen(function* () {
        const discovery = yield* Discovery
        const first = yield* discovery.document({ routes, userAgent: "GPTBot/1.1" })
        const again = yield* discovery.document({ routes, userAgent: "GPTBot/1.1" })
        expect(again.body).toBe(first.body) // the very same bytes: no re-encoding
        expect(again.etag).toBe(first.etag)
        const doc = decode(first.body)
        expect(doc.capabilities.marketplace.total_templates).toBe(seedData.templates.length)
        expect(doc.ai_commerce.endpoints).toEqual([
          {
            method: "POST",
            path: "/buy",
            desc: "buy",
            url: "http://localhost:3000/api/v1/agent/commerce/buy",
            permission: "commerce:buy"
          }
        ])
        expect(doc.for_ai_agents.agent_api_v1.endpoints.map((e: { path: string }) => e.path)).toEqual(["/me"])

        // Nothing changed: after the revalidation interval the same document (same generated_at) is kept.
        yield* TestClock.adjust(REVALIDATE_MS)
        const kept = yield* discovery.document({ routes, userAgent: "GPTBot/1.1" })
        expect(kept.etag).toBe(first.etag)

        // A new template: invisible until the next revalidation, then rebuilt with a new generated_at.
        const extra = Template.make({ ...seedData.templates[0], id: "brand-new-template", name: "Brand New" })
        yield* Effect.flatMap(MarketplaceStore, (s) => s.upsertTemplates([extra]))
        const stale = yield* discovery.document({ routes, userAgent: "GPTBot/1.1" })
        expect(decode(stale.body).capabilities.marketplace.total_templates).toBe(seedData.templates.length)
        yield* TestClock.adjust(REVALIDATE_MS)
        const fresh = decode((yield* discovery.document({ routes, userAgent: "GPTBot/1.1" })).body)
        expect(fresh.capabilities.marketplace.total_templates).toBe(seedData.templates.length + 1)
        expect(fresh._meta.generated_at).not.toBe(doc._meta.generated_at)
        expect(fresh._meta.generated_at).toBe(new Date(2 * REVALIDATE_MS).toISOString())
      })
    )

    it.effect("a different route list rebuilds at once", () =>
      Effect.gen(function* () {
        const discovery = yield* Discovery
        const more = [
          ...routes,
          {
            method: "GET",
            path: "/api/v1/agent/portfolio",
            description: "p",
            auth: "bearer",
            permission: null
          } as const
        ]
        const doc = decode((yield* discovery.document({ routes: more })).body)
        expect(doc.for_ai_agents.agent_api_v1.endpoints.map((e: { path: string }) => e.path)).toEqual([
          "/me",
          "/portfolio"
        ])
      })
    )

    it.effect("a valid key names its agent and organization; a bad key falls back to the User-Agent", () =>
      Effect.gen(function* () {
        const keys = yield* Keys
        const discovery = yield* Discovery
        const account = yield* keys.signUp({
          email: `d-${Math.random().toString(36).slice(2)}@example.com`,
          password: "long enough pw",
          name: "Owner"
        })
        const agent = yield* keys.createAgent(account.id, { name: "Scout", organization: "Acme Labs" })
        const { secret } = yield* keys.createKey(account.id, agent.id, { name: "k", permissions: ["catalog:read"] })
        const keyed = yield* discovery.document({
          routes,
          authorization: `Bearer ${secret}`,
          userAgent: "Mozilla/5.0 (X11) Gecko/20100101 Firefox/130.0"
        })
        expect(keyed.personalised).toBe(true)
        expect(decode(keyed.body).visitor).toMatchObject({
          classified_as: "ai_agent",
          agent_name: "Scout",
          organization: "Acme Labs",
          authenticated: true,
          detected_by: "api_key",
          permissions: ["catalog:read"]
        })
        const bad = yield* discovery.document({
          routes,
          authorization: "Bearer ak_live_nope",
          userAgent: "Mozilla/5.0 (X11) Gecko/20100101 Firefox/130.0"
        })
        expect(bad.personalised).toBe(true)
        const v = decode(bad.body).visitor
        expect(v).toMatchObject({
          classified_as: "browser",
          agent_name: null,
          authenticated: false,
          detected_by: "user_agent"
        })
        expect(v.message).toContain("not accepted")
      })
    )
  }
)

describe("classifyUserAgent", () => {
  const cases: ReadonlyArray<readonly [string | undefined, string, string | null, string | null]> = [
    [
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)",
      "ai_agent",
      "GPTBot",
      "OpenAI"
    ],
    [
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
      "ai_agent",
      "ChatGPT-User",
      "OpenAI"
    ],
    [
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
      "ai_agent",
      "ClaudeBot",
      "Anthropic"
    ],
    ["anthropic-ai", "ai_agent", "anthropic-ai", "Anthropic"],
    ["Anthropic/Python 0.40.0", "ai_agent", "Anthropic SDK", "Anthropic"],
    ["OpenAI/Python 1.55.0", "ai_agent", "OpenAI SDK", "OpenAI"],
    [
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
      "ai_agent",
      "PerplexityBot",
      "Perplexity"
    ],
    ["python-requests/2.32.3", "ai_agent", "python-requests", null],
    ["curl/8.5.0", "ai_agent", "curl", null],
    ["node", "ai_agent", "node", null],
    ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "crawler", "Googlebot", "Google"],
    ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "crawler", "bingbot", "Microsoft"],
    ["SomeNewsBot/3.0 (+https://news.example)", "crawler", null, null],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36",
      "browser",
      null,
      null
    ],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
      "browser",
      null,
      null
    ],
    ["Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0", "browser", null, null],
    ["MyCustomThing/1.0", "unknown", null, null],
    ["", "unknown", null, null],
    [undefined, "unknown", null, null]
  ]
  for (const [ua, kind, name, org] of cases) {
    vit(`${JSON.stringify(ua)} → ${kind}${name ? ` (${name})` : ""}`, () => {
      expect(classifyUserAgent(ua)).toEqual({ classified_as: kind, agent_name: name, organization: org })
    })
  }
})
