// The owner's console in Chromium, at a desktop's width and at a phone's (390 × 844), opened at
// another host name than BASE_URL's (localhost against 127.0.0.1): an agent created with its first
// limits, a top-up whose checkout names the agent and returns to its page with the new balance on the
// same host; then on the overview, without reloading, a refused purchase appears with its reason; the
// owner freezes the agent (its next purchase is refused naming the freeze) and unfreezes it; a
// purchase over the approval threshold appears in the inbox and is approved there; the agent page's
// CSV exports hold the purchase and the decisions. Every owner page fits the screen's width.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signUp } from "../fixtures/agents.js"
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import { noonUtc, runningClock } from "../fixtures/clock.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

// How long a click's answer may take to show: the page's fetch and render, on a machine whose two
// cores run another test file and a browser (expect.poll's 1 s default was missed once in CI).
const CLICK_ANSWER = { timeout: 5_000 }
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const missing = existsSync(CHROMIUM)
  ? undefined
  : `the owner console browser test needs chromium: ${CHROMIUM} not found (apt-get install -y chromium, or set CHROMIUM_PATH; .ci/run installs it)`
const skipReason = skipUnlessCi(missing)

const viewports = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 }
] as const

// The two widths walk at once: each its own owner, agent, tab and downloads; the time is the pages' waits.
describe.skipIf(skipReason !== undefined)("the owner's console in a browser", { concurrent: true }, () => {
  // The server's clock starts at noon UTC of the day the test runs and runs on: the spend chart's
  // "today" is that day however long the test takes, even when it starts just before midnight.
  const start = noonUtc(Date.now())
  const today = new Date(start).toISOString().slice(0, 10)
  let server: RuntimeServer
  let browser: Browser
  let downloads: string

  beforeAll(async () => {
    requirePrerequisite(missing)
    server = await startRuntimeServer({ clock: runningClock(start) })
    downloads = mkdtempSync(join(tmpdir(), "owner-console-"))
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
    if (downloads) rmSync(downloads, { recursive: true, force: true })
  })

  for (const viewport of viewports) {
    it(`overview → a refusal with its reason → freeze → unfreeze → approve from the inbox → CSV export, at ${viewport.name} width`, async () => {
      // The owner uses localhost; BASE_URL says 127.0.0.1.
      const origin = server.baseUrl.replace("://127.0.0.1:", "://localhost:")
      const owner = await signUp(server.baseUrl)
      const context: BrowserContext = await browser.newContext({
        viewport: { width: viewport.width, height: viewport.height },
        acceptDownloads: true
      })
      const [name, ...value] = owner.cookie.split("=")
      await context.addCookies([{ name: name!, value: value.join("="), url: origin }])
      const page: Page = await context.newPage()
      const failed: Array<string> = []
      page.on("response", (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`)
      })
      page.on("pageerror", (e) => failed.push(String(e)))
      const overflowed: Array<string> = []
      /** The page is no wider than the screen (nothing scrolls sideways). */
      const fits = async (label: string) => {
        const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
        if (scroll! > inner!) overflowed.push(`${label}: ${scroll} > ${inner}`)
      }
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${server.baseUrl}/api/dashboard${path}`, {
          ...init,
          headers: { cookie: owner.cookie, "content-type": "application/json", ...init.headers }
        })

      // The agent, created in the page with its first limits: $10 a purchase, ask above $5.
      await page.goto(`${origin}/agent-dashboard`)
      await page.waitForSelector("#signed-in:not([hidden])")
      await fits("agent dashboard")
      await page.getByLabel("Agent name").fill("Walker")
      await page.getByLabel("Per purchase").fill("10")
      await page.getByLabel("Per day").fill("abc")
      await page.getByRole("button", { name: "Create agent" }).click()
      await expect
        .poll(() => page.textContent("#error"), CLICK_ANSWER)
        .toContain("Per day: “abc” is not an amount in dollars")
      expect(await page.inputValue("#agent-daily")).toBe("abc") // what was typed stays
      await page.getByLabel("Per day").fill("50")
      await page.getByRole("button", { name: "Create agent" }).click()
      await page.waitForSelector("#agents-body tr a")
      const agents = (await (await api("/agents")).json()) as Array<{ id: string }>
      const agentId = agents[0]!.id
      const wallet = (await (await api(`/commerce/wallets/${agentId}`)).json()) as {
        policies: Record<string, unknown>
      }
      expect(wallet.policies).toMatchObject({
        perTransactionLimitCents: 1000,
        dailyLimitCents: 5000,
        approvalThresholdCents: 500,
        autonomyLevel: "semi_auto",
        frozen: false
      })
      const created = await api(`/agents/${agentId}/keys`, {
        method: "POST",
        body: JSON.stringify({ name: "walk", permissions: ["commerce:*"] })
      })
      const { secret } = (await created.json()) as { secret: string }
      const buy = (serviceId: string, tierId: string) =>
        fetch(`${server.baseUrl}/api/v1/agent/commerce/buy`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ serviceId, tierId, input: { text: "hello" } })
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))

      // Top-up: the checkout names the agent and comes back to its page, on this host, with the new balance.
      await page.goto(`${origin}/agent-dashboard/agents/${agentId}`)
      await page.fill("#topup-amount", "30")
      await page.getByRole("button", { name: "Top up" }).click()
      await page.waitForURL(/\/checkout\/fake\//)
      expect(new URL(page.url()).origin).toBe(origin)
      expect(await page.textContent(".funds")).toContain("Walker")
      await fits("fake checkout")
      await page.getByRole("button", { name: /^Pay / }).click()
      await page.waitForURL(/\/checkout\/success/)
      expect(new URL(page.url()).origin).toBe(origin)
      expect(await page.textContent("#new-balance")).toBe("$30.00")
      await fits("checkout return")
      await page.getByRole("link", { name: "Back to Walker" }).click()
      await page.waitForSelector("#wallet")
      expect(await page.textContent("#balance")).toBe("$30.00")
      await fits("agent page")

      // The overview: the agent's money and limits; nothing refused yet.
      await page.goto(`${origin}/agent-dashboard/overview`)
      const card = page.locator(`[data-agent-id="${agentId}"]`)
      expect(await card.textContent()).toContain("$30.00")
      expect(await card.textContent()).toContain("$0.00 of $50.00")
      expect(await card.textContent()).toContain("Last refusal: none")
      await fits("overview")

      // A purchase over the per-purchase limit is refused; the open overview shows it with its reason.
      const refused = await buy("svc_doc_translate", "starter") // $19.00 > $10.00
      expect(refused.status).toBe(403)
      await expect.poll(() => card.textContent(), { timeout: 10_000 }).toContain("Over the per-purchase limit")
      const refusal = page.locator("#refusals-body [data-refusal-id]").first()
      expect(await refusal.textContent()).toContain("Over the per-purchase limit")
      expect(await refusal.textContent()).toContain("Document Translation Suite")
      expect(await refusal.textContent()).toContain("$19.00")
      expect(await refusal.textContent()).toContain("Walker")
      await fits("overview with a refusal")

      // Freeze from the overview: the agent's next purchase is refused naming the freeze.
      await card.getByRole("button", { name: /^Freeze spending/ }).click()
      await expect.poll(() => page.textContent("#status"), CLICK_ANSWER).toContain("Frozen")
      expect(await page.locator(`[data-agent-id="${agentId}"] .badge-frozen`).count()).toBe(1)
      const whileFrozen = await buy("svc_embed_vectors", "dev")
      expect(whileFrozen.status).toBe(403)
      expect(JSON.stringify(whileFrozen.body)).toMatch(/frozen/i)
      await expect
        .poll(() => page.locator("#refusals-body [data-refusal-id]").first().textContent(), { timeout: 10_000 })
        .toContain("The agent is frozen")

      // Unfreeze: the badge goes, and the agent may spend within its limits again.
      await page
        .locator(`[data-agent-id="${agentId}"]`)
        .getByRole("button", { name: /^Unfreeze/ })
        .click()
      await expect.poll(() => page.textContent("#status"), CLICK_ANSWER).toContain("Unfrozen")
      expect(await page.locator(`[data-agent-id="${agentId}"] .badge-frozen`).count()).toBe(0)

      // $9.00 is above the $5.00 threshold: it waits, and appears in the inbox without a reload.
      const waiting = await buy("svc_embed_vectors", "dev")
      expect(waiting.body.status).toBe("pending_approval")
      const approvalId = (waiting.body.approval as { id: string }).id
      const item = page.locator(`#approvals-body [data-approval-id="${approvalId}"]`)
      await item.waitFor({ timeout: 10_000 })
      expect(await page.textContent("#approvals-live")).toContain("1 new approval")
      expect(await item.textContent()).toContain("Vector Embeddings API")
      expect(await item.textContent()).toContain("Walker")
      expect(await item.textContent()).toContain("above the agent's approval threshold")
      const approve = item.getByRole("button", { name: /^Approve/ })
      const box = (await approve.boundingBox())!
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width) // reachable without scrolling sideways
      await fits("overview with the inbox")
      await approve.click()
      await expect.poll(() => page.textContent("#status"), CLICK_ANSWER).toContain("Approved")
      expect(await page.locator("#approvals-body [data-approval-id]").count()).toBe(0)
      expect(await page.locator(`[data-agent-id="${agentId}"] .amount`).textContent()).toBe("$21.00")

      if (viewport.name === "phone")
        await page.screenshot({ path: join(tmpdir(), "owner-overview-phone.png"), fullPage: true })

      // The agent page: the purchase, the audit trail, and both CSV exports.
      await page.locator(`[data-agent-id="${agentId}"]`).getByRole("link", { name: "Walker" }).click()
      await page.waitForSelector("#wallet")
      expect(await page.textContent("#balance")).toBe("$21.00")
      expect(await page.textContent("#audit-list")).toContain("Purchase approved")
      expect(await page.textContent("#audit-list")).toContain("Agent frozen")
      expect(await page.textContent("#audit-list")).toContain("Agent unfrozen")
      expect(await page.textContent("#refusals-list")).toContain("Over the per-purchase limit")
      await fits("agent page after the walk")

      // A purchase under the threshold runs by itself: the open page's wallet, list and chart follow.
      const automatic = await buy("svc_image_moderation", "standard")
      expect(automatic.body.status).toBe("completed")
      await expect.poll(() => page.textContent("#balance"), { timeout: 10_000 }).toBe("$20.10")
      expect(await page.textContent("#transactions-table tbody tr")).toContain("Completed — $0.90 charged")
      expect(await page.getAttribute(`#spend-chart rect[data-day="${today}"]`, "data-cents")).toBe("990")
      const download = async (link: string) => {
        const [file] = await Promise.all([
          page.waitForEvent("download"),
          page.getByRole("link", { name: link }).click()
        ])
        const path = join(downloads, `${viewport.name}-${file.suggestedFilename()}`)
        await file.saveAs(path)
        return readFileSync(path, "utf8")
      }
      const transactions = await download("Export transactions (CSV)")
      expect(transactions.split("\r\n")[0]).toContain("price_dollars")
      expect(transactions).toContain("Vector Embeddings API")
      expect(transactions).toMatch(/,900,9\.00,/)
      const audit = await download("Export the audit trail (CSV)")
      for (const action of ["approval.approved", "agent.frozen", "agent.unfrozen"]) expect(audit).toContain(action)

      // The approved purchase's page says who approved it and when.
      await page.locator("#transactions-table tr", { hasText: "Vector Embeddings API" }).locator("a").click()
      await page.waitForSelector(".figures.detail")
      expect(await page.textContent("main")).toMatch(/Approved by you \(the account owner\)/)
      await fits("transaction page")

      if (viewport.name === "phone")
        await page.screenshot({ path: join(tmpdir(), "owner-console-phone.png"), fullPage: true })
      expect(overflowed).toEqual([])
      // The only failed request: none (the refusals and the freeze are the agent's, outside the page).
      expect(failed).toEqual([])
      await context.close()
    }, 120_000)
  }
})
