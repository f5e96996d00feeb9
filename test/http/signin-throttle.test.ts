// Guessing is slowed down: failed sign-ins are throttled per e-mail and client address (5 in 15
// minutes, then a day), the owner can still sign in from another address, and an unknown e-mail is
// treated exactly like a known one. On every storage (the counters are shared by replicas on Postgres).
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeEachStorage } from "../fixtures/suite.js"
import { signUp } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import { setClock } from "../fixtures/clock.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const PASSWORD = "correct horse battery"

/** A sign-in from `localAddress` (the client address the throttle counts by). */
const signInAt = (baseUrl: string, email: string, password: string, localAddress = "127.0.0.1") =>
  new Promise<{ status: number; retryAfter: string | undefined; body: Record<string, unknown> }>((resolve, reject) => {
    const url = new URL(`${baseUrl}/api/dashboard/signin`)
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        localAddress,
        headers: { "content-type": "application/json" }
      },
      (res) => {
        let text = ""
        res.on("data", (c: Buffer) => (text += c.toString()))
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers["retry-after"] as string | undefined,
            body: JSON.parse(text)
          })
        )
      }
    )
    req.on("error", reject)
    req.end(JSON.stringify({ email, password }))
  })

describeEachStorage("sign-in throttling", { concurrent: "storages" }, (storage) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ storage })
  })
  afterAll(() => server?.close())

  const signIn = (email: string, password: string, localAddress = "127.0.0.1") =>
    signInAt(server.baseUrl, email, password, localAddress)

  it("5 wrong passwords are 401; the 6th attempt is 429 with Retry-After, even with the right password", async () => {
    const { email } = await signUp(server.baseUrl)
    for (let i = 0; i < 5; i++) expect((await signIn(email, `wrong password ${i}`)).status).toBe(401)
    const blocked = await signIn(email, "wrong password again")
    expect(blocked.status).toBe(429)
    expect(blocked.body).toMatchObject({ type: "RateLimited", window: "15 minutes" })
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0)
    // A full window is refused to its end, then until enough of it has slid out (docs/keys.md): ≤ 15 + 3 minutes.
    expect(Number(blocked.retryAfter)).toBeLessThanOrEqual(1080)
    // The guesser's address stays blocked for this account, the right password included.
    expect((await signIn(email, PASSWORD)).status).toBe(429)
    // The owner, from another address, still signs in.
    expect((await signIn(email, PASSWORD, "127.0.0.2")).status).toBe(200)
  })

  it("an unknown e-mail is throttled exactly like a known one (the answers do not tell which exist)", async () => {
    const { email } = await signUp(server.baseUrl)
    const unknown = `nobody-${Date.now()}@example.com`
    const known: Array<number> = []
    const missing: Array<number> = []
    for (let i = 0; i < 6; i++) {
      known.push((await signIn(email, "wrong", "127.0.0.3")).status)
      missing.push((await signIn(unknown, "wrong", "127.0.0.3")).status)
    }
    expect(known).toEqual([401, 401, 401, 401, 401, 429])
    expect(missing).toEqual(known)
  })

  it("one address guessing across many accounts is stopped after 30 failures in 15 minutes", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 31; i++) statuses.push((await signIn(`spray-${i}@example.com`, "wrong", "127.0.0.4")).status)
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses[30]).toBe(429)
  })

  it("20 wrong passwords sent at once: 5 are checked (401), the other 15 are 429 before any password check", async () => {
    const { email } = await signUp(server.baseUrl)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signIn(email, `parallel guess ${i}`, "127.0.0.6"))
    )
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses.filter((s) => s === 401)).toHaveLength(5)
    expect(statuses.filter((s) => s === 429)).toHaveLength(15)
    expect(answers.filter((a) => a.status === 429).every((a) => Number(a.retryAfter) > 0)).toBe(true)
    // The window is full: the right password from that address waits too.
    expect((await signIn(email, PASSWORD, "127.0.0.6")).status).toBe(429)
  })

  it("a sign-in that succeeds gives its slot back: 8 successes, then 5 failures are still 401", async () => {
    const { email } = await signUp(server.baseUrl)
    for (let i = 0; i < 8; i++) expect((await signIn(email, PASSWORD, "127.0.0.7")).status).toBe(200)
    for (let i = 0; i < 5; i++) expect((await signIn(email, `wrong ${i}`, "127.0.0.7")).status).toBe(401)
    expect((await signIn(email, "wrong again", "127.0.0.7")).status).toBe(429)
  })
})

// The promise holds across a window's edge: the windows are framed on the clock (every 15 minutes),
// and a guesser who spreads five failures over an edge must not get five more. Failures are weighed
// over a sliding window (the previous window's count, weighted by how much of it still overlaps).
describeEachStorage("sign-in throttling across a window's edge", (storage) => {
  // 2 s before a quarter hour (12:15:00 UTC): the windows turn during the attempts.
  const time = setClock(Date.UTC(2026, 10, 28, 12, 14, 58))
  let server: RuntimeServer
  beforeAll(async () => {
    server = await startRuntimeServer({ storage, clock: time.clock })
  })
  afterAll(() => server?.close())

  it("4 failures before the edge and 1 after it: the 6th attempt is 429, and stays so until enough of the old window has passed", async () => {
    const { email } = await signUp(server.baseUrl)
    const at = (address: string, password = "wrong") => signInAt(server.baseUrl, email, password, address)
    for (let i = 0; i < 4; i++) expect((await at("127.0.0.5")).status).toBe(401)
    time.advance(3_000) // 12:15:01
    expect((await at("127.0.0.5")).status).toBe(401)
    const blocked = await at("127.0.0.5", PASSWORD)
    expect(blocked.status).toBe(429)
    // 4 of the old window weigh 4 × (1 − elapsed / 900) with 1 in the new one: under 5 once more
    // than a quarter of the new window has passed (225 s); Retry-After says when.
    const wait = Number(blocked.retryAfter)
    expect(wait).toBeGreaterThanOrEqual(223)
    expect(wait).toBeLessThanOrEqual(225)
    time.advance((wait - 2) * 1000)
    expect((await at("127.0.0.5", PASSWORD)).status).toBe(429)
    time.advance(3_000)
    expect((await at("127.0.0.5", PASSWORD)).status).toBe(200)
  })
})
