// Tests for the human-readable site pages: language selection, document structure, absolute links, escaping and legal wording.
import { describe, it, expect } from "vitest"
import { readFileSync } from "node:fs"
import { pickLang } from "../src/http/site/lang.js"
import { pageNames, renderPage, type Lang, type PageName, type SiteContext } from "../src/http/site/pages.js"

const ctx: SiteContext = {
  baseUrl: "https://agents.example.test",
  platformName: "Example Platform",
  version: "1.0.0",
  rateLimitPerMinute: 60,
  rateLimitPerDay: 1000,
  payments: "fake"
}
const langs: ReadonlyArray<Lang> = ["en", "pt"]

const hrefs = (html: string): Array<string> => [...html.matchAll(/\b(?:href|src)="([^"]*)"/g)].map((m) => m[1]!)

describe("pickLang", () => {
  it("defaults to en", () => {
    expect(pickLang(undefined, undefined)).toBe("en")
    expect(pickLang("", "")).toBe("en")
    expect(pickLang(undefined, "fr-FR, de;q=0.8")).toBe("en")
    expect(pickLang("xx", "*")).toBe("en")
  })

  it("lets ?lang= win over Accept-Language", () => {
    expect(pickLang("en", "pt-BR,pt;q=0.9")).toBe("en")
    expect(pickLang("pt", "en-US,en;q=0.9")).toBe("pt")
    expect(pickLang("lang=pt&x=1", "en")).toBe("pt")
    expect(pickLang("?lang=en", "pt")).toBe("en")
    expect(pickLang("?page=2&lang=pt-BR", "en")).toBe("pt")
    expect(pickLang("?page=2", "pt")).toBe("pt")
  })

  it("maps pt-BR and other pt variants to pt", () => {
    expect(pickLang("pt-BR", undefined)).toBe("pt")
    expect(pickLang("PT-br", undefined)).toBe("pt")
    expect(pickLang(undefined, "pt-BR")).toBe("pt")
    expect(pickLang(undefined, "en-GB")).toBe("en")
  })

  it("falls back to Accept-Language when the query value is unsupported", () => {
    expect(pickLang("fr", "pt-BR")).toBe("pt")
    expect(pickLang("lang=de", "pt")).toBe("pt")
  })

  it("honours q-values", () => {
    expect(pickLang(undefined, "en;q=0.5, pt-BR;q=0.9")).toBe("pt")
    expect(pickLang(undefined, "pt;q=0.4, en;q=0.8")).toBe("en")
    expect(pickLang(undefined, "fr;q=1, pt;q=0.7, en;q=0.6")).toBe("pt")
    expect(pickLang(undefined, "pt;q=0, en;q=0.1")).toBe("en")
    expect(pickLang(undefined, "de, pt;q=0")).toBe("en")
  })

  it("keeps header order for equal q-values", () => {
    expect(pickLang(undefined, "pt-BR, en")).toBe("pt")
    expect(pickLang(undefined, "en, pt-BR")).toBe("en")
  })
})

describe("renderPage", () => {
  it("exports the five page names", () => {
    expect([...pageNames].sort()).toEqual(["for-ai-agents", "integrations", "legal-guide", "terms", "whitepaper"])
  })

  for (const name of pageNames) {
    for (const lang of langs) {
      describe(`${name} (${lang})`, () => {
        const html = renderPage(name, lang, ctx)

        it("is a complete HTML5 document with the right lang attribute", () => {
          expect(html.toLowerCase().startsWith("<!doctype html>")).toBe(true)
          expect(html).toContain(`<html lang="${lang === "en" ? "en" : "pt-BR"}">`)
          expect(html).toContain('<meta charset="utf-8">')
          expect(html).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1">/)
          expect(html).toMatch(/<title>[^<]+<\/title>/)
          expect(html).toContain(`<link rel="stylesheet" href="${ctx.baseUrl}/assets/site.css">`)
          for (const tag of ["head", "body", "header", "nav", "main", "footer"]) {
            expect(html).toContain(`<${tag}`)
            expect(html).toContain(`</${tag}>`)
          }
          expect(html.trimEnd().endsWith("</html>")).toBe(true)
          expect(html.match(/<h1[\s>]/g)?.length).toBe(1)
        })

        it("has headings in order (no skipped levels)", () => {
          const levels = [...html.matchAll(/<h([1-6])[\s>]/g)].map((m) => Number(m[1]))
          expect(levels[0]).toBe(1)
          for (let i = 1; i < levels.length; i++) expect(levels[i]! - levels[i - 1]!).toBeLessThanOrEqual(1)
        })

        it("links every page, the dashboard, the docs and both languages", () => {
          for (const target of pageNames) expect(html).toContain(`href="${ctx.baseUrl}/${target}?lang=${lang}"`)
          expect(html).toContain(`href="${ctx.baseUrl}/agent-dashboard"`)
          expect(html).toContain(`href="${ctx.baseUrl}/docs"`)
          expect(html).toContain(`href="${ctx.baseUrl}/${name}?lang=en"`)
          expect(html).toContain(`href="${ctx.baseUrl}/${name}?lang=pt"`)
        })

        it("builds every address absolutely from the base URL", () => {
          const links = hrefs(html)
          expect(links.length).toBeGreaterThan(10)
          for (const link of links) expect(link.startsWith(`${ctx.baseUrl}/`)).toBe(true)
        })

        it("uses a base URL with a trailing slash without doubling it", () => {
          const out = renderPage(name, lang, { ...ctx, baseUrl: `${ctx.baseUrl}/` })
          expect(out).toBe(html)
        })

        it("escapes interpolated values", () => {
          const evil: SiteContext = {
            baseUrl: 'https://x.test/"><script>alert(1)</script>',
            platformName: "<b>Evil & Co</b>",
            version: '1.0.0"<i>',
            rateLimitPerMinute: 60,
            rateLimitPerDay: 1000,
            payments: "fake"
          }
          const out = renderPage(name, lang, evil)
          expect(out).not.toContain("<script>")
          expect(out).not.toContain("<b>Evil")
          expect(out).not.toContain("<i>")
          expect(out).toContain("&lt;script&gt;")
          expect(out).toContain("&lt;b&gt;Evil &amp; Co&lt;/b&gt;")
          expect(out).toContain('href="https://x.test/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;/docs"')
        })
      })
    }
  }
})

describe("page content", () => {
  const page = (name: PageName, lang: Lang): string => renderPage(name, lang, ctx)
  const text = (html: string): string => html.replace(/<[^>]+>/g, "").replace(/\s+/g, " ")

  const legal: Record<Lang, ReadonlyArray<string>> = {
    en: ["not a security", "Brazil", "Paraguay", "not investment advice"],
    pt: ["não é um valor mobiliário", "Brasil", "Paraguai", "não constituem recomendação de investimento"]
  }

  for (const name of ["terms", "whitepaper", "legal-guide"] as const) {
    for (const lang of langs) {
      it(`${name} (${lang}) states the legal position`, () => {
        const body = text(page(name, lang))
        for (const phrase of legal[lang]) expect(body).toContain(phrase)
      })
    }
  }

  it("whitepaper has a clearly marked risks section and the plan table", () => {
    expect(page("whitepaper", "en")).toContain("Risks and disclaimers")
    expect(page("whitepaper", "pt")).toContain("Riscos e avisos legais")
    const en = text(page("whitepaper", "en"))
    for (const s of [
      "Starter",
      "49 USD",
      "Pro",
      "99 USD",
      "Scale",
      "299 USD",
      "10,000",
      "unlimited",
      "49%",
      "16 templates in 8 categories",
      "founder veto",
      "AES-256",
      "TLS 1.3"
    ]) {
      expect(en).toContain(s)
    }
  })

  it("for-ai-agents explains keys, permissions, limits and the commerce protocol", () => {
    for (const lang of langs) {
      const html = page("for-ai-agents", lang)
      for (const perm of [
        "catalog:read",
        "evaluate",
        "acquire",
        "invest",
        "create",
        "commerce:read",
        "commerce:buy",
        "commerce:sell",
        "commerce:negotiate",
        "commerce:*"
      ]) {
        expect(html).toContain(`<code>${perm}</code>`)
      }
      expect(html).toContain("Authorization: Bearer &lt;")
      expect(html).toContain(`href="${ctx.baseUrl}/agent-dashboard"`)
      for (const path of [
        "/api/discover",
        "/llms.txt",
        "/api/v1/agent/openapi.json",
        "/api/v1/agent/mcp-tools.json",
        "/.well-known/mcp.json",
        "/.well-known/ai-plugin.json",
        "/docs"
      ]) {
        expect(html).toContain(`href="${ctx.baseUrl}${path}"`)
      }
      expect(html).toContain(`${ctx.baseUrl}/api/v1/agent/commerce`)
      for (const s of ["AI2AIC", "1.0.0", "60", "30", "85%", "15%", "manual", "semi_auto", "full_auto", "curl"])
        expect(html).toContain(s)
    }
    expect(text(page("for-ai-agents", "en"))).toContain("1,000 requests per day")
    expect(text(page("for-ai-agents", "pt"))).toContain("1.000 requisições por dia")
  })

  it("for-ai-agents states the configured rate limits, not fixed numbers (en and pt)", () => {
    const custom: SiteContext = { ...ctx, rateLimitPerMinute: 250, rateLimitPerDay: 12_345 }
    const en = text(renderPage("for-ai-agents", "en", custom))
    expect(en).toContain("250 requests per minute and 12,345 requests per day per key")
    expect(en).not.toContain("60 requests per minute")
    expect(en).not.toContain("1,000 requests per day")
    const pt = text(renderPage("for-ai-agents", "pt", custom))
    expect(pt).toContain("250 requisições por minuto e 12.345 requisições por dia por chave")
    expect(pt).not.toContain("60 requisições por minuto")
    expect(pt).not.toContain("1.000 requisições por dia")
  })

  it("integrations lists only what this process runs: the configured processor, the APIs, webhooks", () => {
    const en = text(page("integrations", "en"))
    for (const s of [
      "Active",
      "Test payments (fake processor)",
      "no money moves",
      "REST API",
      "tRPC",
      "MCP",
      "Webhooks",
      "HTTP 402",
      "early access"
    ]) {
      expect(en).toContain(s)
    }
    // Nothing this service does not implement is called active or available.
    for (const s of ["OpenID", "Slack", "Zapier", "Available", "Stripe payments"]) expect(en).not.toContain(s)
    const stripe = text(renderPage("integrations", "en", { ...ctx, payments: "stripe" }))
    expect(stripe).toContain("Stripe payments")
    expect(stripe).not.toContain("fake processor")
    const pt = text(page("integrations", "pt"))
    for (const s of ["Ativas", "Pagamentos de teste", "HTTP 402", "acesso antecipado"]) expect(pt).toContain(s)
    for (const s of ["OpenID", "Slack", "Zapier", "Disponíveis"]) expect(pt).not.toContain(s)
    expect(text(renderPage("integrations", "pt", { ...ctx, payments: "stripe" }))).toContain("Pagamentos com Stripe")
  })

  it("terms and legal guide cover the required topics", () => {
    const terms = text(page("terms", "en"))
    for (const s of ["85%", "15%", "not medical advice", "GDPR", "LGPD", "CCPA", "PIPA", "APPI", "responsible"])
      expect(terms).toContain(s)
    const guide = text(page("legal-guide", "pt"))
    for (const s of ["IPI", "ICMS", "posição declarada pela plataforma", "LGPD"]) expect(guide).toContain(s)
  })
})

describe("stylesheet", () => {
  const stylesheet = readFileSync(new URL("../src/http/site/styles/site.css", import.meta.url), "utf8")
  it("is a small stylesheet with light and dark schemes", () => {
    expect(stylesheet).toContain("prefers-color-scheme: dark")
    expect(stylesheet).toContain("max-width: 48rem")
    expect(stylesheet).toContain("system-ui")
    expect(stylesheet).toContain("pre")
    // The owner's console (overview cards, phone layout, chart axis) grew it past 12 KB; it travels
    // compressed (about 4 KB with brotli) and is revalidated by its ETag, so 20 KB is still small.
    expect(stylesheet.length).toBeLessThan(20_000)
  })
})
