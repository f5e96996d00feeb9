// Every HTML page is valid HTML by html-validate's recommended rules (the markup the server sends,
// signed out and signed in).
import { HtmlValidate } from "html-validate"
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

const validator = new HtmlValidate({ extends: ["html-validate:recommended"] })

describe("every HTML page", () => {
  it("passes html-validate's recommended rules", async () => {
    const problems: Array<string> = []
    for (const p of pages) {
      const res = await fetch(`${server.baseUrl}${p.path}`, { headers: p.cookie ? { cookie: p.cookie } : {} })
      expect(res.status, p.label).toBe(200)
      const html = await res.text()
      // Judged full: the owner's sections drawn with their items, not their empty hints.
      expect(missingSections(p, html), p.label).toEqual([])
      const report = await validator.validateString(html, p.label)
      for (const result of report.results)
        for (const m of result.messages) problems.push(`${p.label} ${m.line}:${m.column} ${m.ruleId}: ${m.message}`)
    }
    expect(pages.length).toBe(21)
    expect(problems.join("\n")).toBe("")
  })
})
