// What a browser is told about every HTML page: a Content-Security-Policy that forbids inline
// scripts (and inline styles everywhere but /docs, whose reference renderer injects its own),
// forbids framing and the <base> element, and limits where forms post; and pages that need no
// inline code to work: every script and stylesheet is a file, revalidated by its ETag.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { missingSections, type SitePage, sitePages } from "../fixtures/sitePages.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
let pages: ReadonlyArray<SitePage>
beforeAll(async () => {
  server = await startServer()
  pages = await sitePages(server.baseUrl)
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const open = (p: SitePage) => fetch(`${server.baseUrl}${p.path}`, { headers: p.cookie ? { cookie: p.cookie } : {} })

const directives = (csp: string): Map<string, ReadonlyArray<string>> =>
  new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!.toLowerCase(), values])
  )

describe("every HTML page", () => {
  it("carries a strict Content-Security-Policy", async () => {
    expect(pages.length).toBe(21)
    for (const p of pages) {
      const res = await open(p)
      expect(res.status, p.label).toBe(200)
      expect(res.headers.get("content-type"), p.label).toContain("text/html")
      const csp = directives(res.headers.get("content-security-policy") ?? "")
      expect(csp.get("default-src"), p.label).toEqual(["'none'"])
      expect(csp.get("frame-ancestors"), p.label).toEqual(["'none'"])
      expect(csp.get("base-uri"), p.label).toEqual(["'none'"])
      const scripts = csp.get("script-src") ?? []
      expect(scripts, p.label).toContain("'self'")
      for (const loose of ["'unsafe-inline'", "'unsafe-eval'", "*", "data:", "http:", "https:"])
        expect(scripts, p.label).not.toContain(loose)
      const styles = csp.get("style-src") ?? []
      // /docs's API reference renders its own styles inline; no other page may.
      expect(p.path === "/docs" ? [] : styles, p.label).not.toContain("'unsafe-inline'")
      const forms = csp.get("form-action") ?? []
      expect(forms.length, p.label).toBeGreaterThan(0)
      expect(forms, p.label).not.toContain("*")
      await res.text()
    }
  })

  it("has no inline script, style element or style attribute: all of it is in files", async () => {
    for (const p of pages) {
      const html = await (await open(p)).text()
      // Judged full: the owner's sections drawn with their items, not their empty hints.
      expect(missingSections(p, html), p.label).toEqual([])
      // The only script without a src is /docs's API document, which is data, not code.
      for (const tag of (html.match(/<script\b[^>]*>/g) ?? []).filter((t) => !/\bsrc="/.test(t))) {
        expect(tag, p.label).toContain('type="application/json"')
      }
      expect(html, p.label).not.toMatch(/<style[\s>]|\sstyle="|\son[a-z]+="/i)
    }
  })

  it("loads its scripts and stylesheets from this origin, each answered 304 once the browser has it", async () => {
    const files = new Set<string>()
    for (const p of pages) {
      const html = await (await open(p)).text()
      for (const m of html.matchAll(/<(?:script|link rel="stylesheet")[^>]*\b(?:src|href)="([^"]+)"/g))
        files.add(new URL(m[1]!, server.baseUrl).pathname)
    }
    expect([...files].sort()).toEqual([
      "/assets/checkout.css",
      "/assets/checkout.js",
      "/assets/dashboard.js",
      "/assets/owner.js",
      "/assets/site.css",
      "/docs/scalar.js"
    ])
    for (const path of [...files].filter((f) => f.startsWith("/assets/"))) {
      const first = await fetch(`${server.baseUrl}${path}`)
      expect(first.status, path).toBe(200)
      expect(first.headers.get("content-type"), path).toMatch(
        path.endsWith(".css") ? /^text\/css/ : /^text\/javascript/
      )
      const etag = first.headers.get("etag")
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]+"$/)
      expect(first.headers.get("cache-control"), path).toContain("no-cache")
      expect((await first.text()).length, path).toBeGreaterThan(100)
      const again = await fetch(`${server.baseUrl}${path}`, { headers: { "if-none-match": etag! } })
      expect(again.status, path).toBe(304)
      expect(again.headers.get("etag"), path).toBe(etag)
    }
  })
})
