// Guessing is slowed down: failed sign-ins are throttled per e-mail and client address (5 in 15
// minutes, then a day), the owner can still sign in from another address, and an unknown e-mail is
// treated exactly like a known one. On every storage (the counters are shared by replicas on Postgres).
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { describeEachStorage } from "../fixtures/suite.js"
import { signUp } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

const PASSWORD = "correct horse battery"

describeEachStorage("sign-in throttling", (storage) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ storage })
  })
  afterAll(() => server?.close())

  const signIn = (email: string, password: string, localAddress = "127.0.0.1") =>
    new Promise<{ status: number; retryAfter: string | undefined; body: Record<string, unknown> }>(
      (resolve, reject) => {
        const url = new URL(`${server.baseUrl}/api/dashboard/signin`)
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
      }
    )

  it("5 wrong passwords are 401; the 6th attempt is 429 with Retry-After, even with the right password", async () => {
    const { email } = await signUp(server.baseUrl)
    for (let i = 0; i < 5; i++) expect((await signIn(email, `wrong password ${i}`)).status).toBe(401)
    const blocked = await signIn(email, "wrong password again")
    expect(blocked.status).toBe(429)
    expect(blocked.body).toMatchObject({ type: "RateLimited", window: "15 minutes" })
    expect(Number(blocked.retryAfter)).toBeGreaterThan(0)
    expect(Number(blocked.retryAfter)).toBeLessThanOrEqual(900)
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
})
