// axe-core in Chromium over every page of the site, signed out and signed in (the dashboard with its
// agents and keys drawn by its script, the owner's agent page), at desktop width and at a phone's
// 390 × 844: no serious or critical violation. /docs is left out: Scalar draws it, not this code.
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import { missingSections, type SitePage, sitePages } from "../fixtures/sitePages.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const missing = existsSync(CHROMIUM)
  ? undefined
  : `the accessibility test needs chromium: ${CHROMIUM} not found (apt-get install -y chromium, or set CHROMIUM_PATH; .ci/run installs it)`
const skipReason = skipUnlessCi(missing)

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

const viewports = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 }
] as const

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown> }>
}

describe.skipIf(skipReason !== undefined)("accessibility (axe-core in Chromium)", () => {
  let server: TestServer
  let browser: Browser
  let pages: ReadonlyArray<SitePage>

  beforeAll(async () => {
    requirePrerequisite(missing)
    server = await startServer()
    pages = (await sitePages(server.baseUrl)).filter((p) => p.path !== "/docs")
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Opens the page as a person would (with the session cookie when signed in) and waits for its script to draw it. */
  const visit = async (page: Page, p: SitePage) => {
    await page.goto(`${server.baseUrl}${p.path}`)
    if (p.path === "/agent-dashboard")
      await page.waitForSelector(p.cookie ? "#signed-in:not([hidden]) #agents-body tr" : "#signed-out:not([hidden])")
  }

  /** axe's serious and critical violations on the open page (axe is evaluated over the DevTools protocol, which the page's CSP does not govern). */
  const serious = async (page: Page): Promise<ReadonlyArray<string>> => {
    await page.evaluate(axeSource)
    const violations = (await page.evaluate(
      "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)"
    )) as ReadonlyArray<Violation>
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
  }

  for (const viewport of viewports) {
    it(`no serious or critical violation on any page, signed out and signed in, at ${viewport.name} width (${viewport.width} px)`, async () => {
      const found: Array<string> = []
      // One tab per session (signed out, and each signed-in owner's cookie), going from page to page
      // as a person would: every page is a new document with axe injected afresh. A fresh browser
      // context per page cost ~2 s a page (a renderer process started, axe's 0.5 MB compiled cold),
      // against ~0.45 s in a tab that stays open: 93 → 28 s for the file alone.
      const tabs = new Map<string, Page>()
      try {
        for (const p of pages) {
          const session = p.cookie ?? ""
          let page = tabs.get(session)
          if (page === undefined) {
            const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } })
            if (p.cookie) {
              const [name, ...value] = p.cookie.split(";")[0]!.split("=")
              await context.addCookies([{ name: name!, value: value.join("="), url: server.baseUrl }])
            }
            page = await context.newPage()
            tabs.set(session, page)
          }
          await visit(page, p)
          // Judged full: the owner's sections drawn with their items (as the browser shows them), not their empty hints.
          for (const gap of missingSections(p, await page.content())) found.push(`${p.label}: not full, no ${gap}`)
          for (const v of await serious(page)) found.push(`${p.label}: ${v}`)
        }
      } finally {
        for (const page of tabs.values()) await page.context().close()
      }
      expect(pages.length).toBe(20)
      expect(found.join("\n")).toBe("")
    }, 120_000)
  }
})
