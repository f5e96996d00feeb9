// End to end: the example seller (examples/seller.ts) and the example buyer (examples/agent.ts
// --service, over REST, MCP and A2A) as two processes against a server. What a seller is promised:
// the order reaches it (pulled or pushed, signed), its output is what the buyer gets, and it is paid
// 85 % of the price when it delivers; what a buyer is promised: nothing stays held once the order
// ends, and a failed order is not charged.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { afterAll, beforeAll, expect, it } from "vitest"
import { bundled } from "../fixtures/bundle.js"
import { startServer, type TestServer } from "../fixtures/server.js"
import { describeEachStorage } from "../fixtures/suite.js"

const COMMERCE = "/api/v1/agent/commerce"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

// The two examples compiled once per test process (test/fixtures/bundle.ts): a buyer or seller run
// as `node --import tsx` spent ~1 s of CPU more to start, and this file starts ~20 of them.
// examples/agent.test.ts runs the buyer as the README does, through tsx.
const scripts = new Map<string, string>()
beforeAll(async () => {
  for (const file of ["examples/seller.ts", "examples/agent.ts"]) scripts.set(file, await bundled(file))
}, 60_000)

const spawnExample = (file: "examples/seller.ts" | "examples/agent.ts", args: ReadonlyArray<string>) =>
  spawn(process.execPath, [scripts.get(file)!, ...args], { cwd: process.cwd(), env: process.env })

const finish = (child: ChildProcessWithoutNullStreams) =>
  new Promise<Run>((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** A running seller: its published service and everything it printed so far. */
interface Seller {
  readonly serviceId: string
  readonly output: () => string
  readonly stop: () => void
}

const startSeller = (baseUrl: string, key: string, args: ReadonlyArray<string>) =>
  new Promise<Seller>((resolve, reject) => {
    const child = spawnExample("examples/seller.ts", ["--url", baseUrl, "--api-key", key, "--wait-ms", "5000", ...args])
    let out = ""
    let err = ""
    child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
      const published = /^step 3\/4 publish: service (\S+)/m.exec(out)
      if (published !== null && /^step 4\/4 serve: /m.test(out))
        resolve({ serviceId: published[1], output: () => out, stop: () => child.kill() })
    })
    child.on("close", (code) => reject(new Error(`the seller exited ${code} before serving:\n${out}\n${err}`)))
  })

const buyer = async (baseUrl: string, serviceId: string, extra: ReadonlyArray<string> = []) => {
  const run = await finish(
    spawnExample("examples/agent.ts", [
      "--url",
      baseUrl,
      "--service",
      serviceId,
      "--poll-ms",
      "50",
      "--timeout-s",
      "30",
      ...extra
    ])
  )
  return run
}

/** The seller's key, made by its owner on the dashboard, so the test can read the seller's wallet. */
const sellerKey = async (baseUrl: string) => {
  const signup = await fetch(`${baseUrl}/api/dashboard/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `s-${crypto.randomUUID()}@example.com`, password: "seller password", name: "S" })
  })
  const cookie = signup.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ")
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify(body)
    })
    expect(res.status).toBe(201)
    return (await res.json()) as { id: string; secret: string }
  }
  const agent = await post("/api/dashboard/agents", { name: "seller", organization: "Seller Org" })
  const key = await post(`/api/dashboard/agents/${agent.id}/keys`, {
    name: "seller",
    permissions: ["catalog:read", "commerce:*"]
  })
  return key.secret
}

const get = async <A>(baseUrl: string, key: string, path: string) => {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  return (await res.json()) as A
}

/** The buy line of the buyer's output: its transaction, the split and the seller's output. */
const boughtLine = (stdout: string) => {
  const m =
    /^step 6\/7 buy: transaction (\S+) completed: paid \$(\d+\.\d\d), seller \$(\d+\.\d\d), platform fee \$(\d+\.\d\d); output (.*)$/m.exec(
      stdout
    )
  expect(m, stdout).not.toBeNull()
  const [, txId, paid, seller, fee, output] = m!
  const cents = (s: string) => Math.round(Number(s) * 100)
  return {
    txId,
    paidCents: cents(paid),
    sellerCents: cents(seller),
    feeCents: cents(fee),
    output: JSON.parse(output) as Record<string, unknown>
  }
}

const TEXT = "Sellers deliver for real. The buyer pays when the seller delivers, and not before."

// The time is the processes' and the server's waits; each storage has its own server and processes.
const TWO_PROCESSES = "the example seller and the example buyer, two processes"
describeEachStorage(TWO_PROCESSES, { concurrent: "storages" }, (storage) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ storage, config: { negotiationDelayMs: 100 } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("pull: the buyer gets the seller's own output over REST, MCP and A2A; the seller is paid 85 %, nothing stays held", async () => {
    const key = await sellerKey(server.baseUrl)
    const seller = await startSeller(server.baseUrl, key, ["--mode", "pull"])
    try {
      // The discovery document told the seller how orders reach it.
      expect(seller.output()).toMatch(/^step 2\/4 discover: fulfilment modes offered: pull, push, simulated$/m)
      const rest = await buyer(server.baseUrl, seller.serviceId, ["--text", TEXT])
      expect(rest.code, `${rest.stdout}\n${rest.stderr}`).toBe(0)
      const bought = boughtLine(rest.stdout)
      // The seller's computation, not the platform's: 14 words, two sentences, its summary rule.
      expect(bought.output).toEqual({
        words: 14,
        characters: TEXT.length,
        sentences: 2,
        keywords: ["before", "buyer", "deliver", "delivers", "pays"],
        summary: "Sellers deliver for real."
      })
      expect(seller.output()).toMatch(new RegExp(`^order ${bought.txId} delivered: 14 words`, "m"))
      // The price was agreed with the seller itself (the buyer offered 85 %, over its 80 % floor),
      // not by the platform's automatic seller.
      expect(seller.output()).toMatch(/^negotiation \S+: offer \$\d+\.\d\d of \$\d+\.\d\d, accept$/m)
      expect(rest.stdout).toMatch(/^step 5\/7 negotiate: agreed /m)
      // 15 % to the nearest cent, halves up (docs/money.md); the seller gets the rest.
      expect(bought.feeCents).toBe(Math.floor((bought.paidCents * 15 + 50) / 100))
      expect(bought.sellerCents + bought.feeCents).toBe(bought.paidCents)
      expect(rest.stdout).toMatch(/^ {4}wallet: balance \$\d+\.\d\d, held \$0\.00$/m)
      expect(rest.stdout).toMatch(/^step 7\/7 review: transaction \S+ \(completed, .*\) reviewed 5\/5$/m)

      const viaMcp = await buyer(server.baseUrl, seller.serviceId, ["--text", TEXT, "--via", "mcp"])
      expect(viaMcp.code, `${viaMcp.stdout}\n${viaMcp.stderr}`).toBe(0)
      expect(viaMcp.stdout).toMatch(/^ {4}bought over mcp: transaction \S+ (pending|completed)$/m)
      const second = boughtLine(viaMcp.stdout)
      expect(second.output).toEqual(bought.output)

      // Over A2A the buy answers a task named by its transaction, followed with GetTask until the
      // seller delivered: its artifact is the seller's output.
      const viaA2a = await buyer(server.baseUrl, seller.serviceId, ["--text", TEXT, "--via", "a2a"])
      expect(viaA2a.code, `${viaA2a.stdout}\n${viaA2a.stderr}`).toBe(0)
      const third = boughtLine(viaA2a.stdout)
      expect(viaA2a.stdout).toMatch(new RegExp(`^ {4}A2A task ${third.txId} TASK_STATE_WORKING$`, "m"))
      const artifact = new RegExp(`^ {4}A2A task ${third.txId} TASK_STATE_COMPLETED: artifact (.*)$`, "m").exec(
        viaA2a.stdout
      )
      expect(artifact, viaA2a.stdout).not.toBeNull()
      expect(JSON.parse(artifact![1])).toEqual(bought.output)
      expect(third.output).toEqual(bought.output)
      expect(third.feeCents).toBe(Math.floor((third.paidCents * 15 + 50) / 100))
      expect(third.sellerCents + third.feeCents).toBe(third.paidCents)
      expect(viaA2a.stdout).toMatch(/^ {4}wallet: balance \$\d+\.\d\d, held \$0\.00$/m)

      // The seller's wallet holds exactly its share of the three sales.
      const wallet = await get<{ balanceCents: number; heldCents: number }>(server.baseUrl, key, `${COMMERCE}/wallet`)
      expect(wallet.balanceCents).toBe(bought.sellerCents + second.sellerCents + third.sellerCents)
      expect(wallet.heldCents).toBe(0)
      const order = await get<{ status: string; output: unknown }>(
        server.baseUrl,
        key,
        `${COMMERCE}/orders/${bought.txId}`
      )
      expect(order).toMatchObject({ status: "delivered", output: bought.output })
    } finally {
      seller.stop()
    }
  }, 120_000)

  it("pull: an input the seller cannot serve fails the order; the buyer is not charged", async () => {
    const key = await sellerKey(server.baseUrl)
    const seller = await startSeller(server.baseUrl, key, ["--mode", "pull"])
    try {
      const run = await buyer(server.baseUrl, seller.serviceId, ["--text", "   "])
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/transaction \S+ failed: input\.text is empty \(the price was not charged\)/)
      expect(run.stdout).toMatch(/^ {4}wallet: balance \$200\.00, held \$0\.00$/m)
      const wallet = await get<{ balanceCents: number }>(server.baseUrl, key, `${COMMERCE}/wallet`)
      expect(wallet.balanceCents).toBe(0)
    } finally {
      seller.stop()
    }
  }, 120_000)

  it("push: a signed order answered inline, and a long one accepted (202) then delivered through the API", async () => {
    const key = await sellerKey(server.baseUrl)
    const seller = await startSeller(server.baseUrl, key, ["--mode", "push", "--slow-over", "100"])
    try {
      const inline = await buyer(server.baseUrl, seller.serviceId, ["--text", TEXT])
      expect(inline.code, `${inline.stdout}\n${inline.stderr}`).toBe(0)
      const first = boughtLine(inline.stdout)
      expect(first.output).toMatchObject({ words: 14, summary: "Sellers deliver for real." })
      expect(seller.output()).toMatch(new RegExp(`^order ${first.txId} pushed`, "m"))

      const long = `${TEXT} ${TEXT}`
      const later = await buyer(server.baseUrl, seller.serviceId, ["--text", long])
      expect(later.code, `${later.stdout}\n${later.stderr}`).toBe(0)
      const second = boughtLine(later.stdout)
      expect(second.output).toMatchObject({ words: 28, sentences: 4 })
      expect(seller.output()).toMatch(new RegExp(`^order ${second.txId} accepted`, "m"))
      expect(seller.output()).toMatch(new RegExp(`^order ${second.txId} delivered: 28 words`, "m"))
      expect(later.stdout).toMatch(/^ {4}wallet: balance \$\d+\.\d\d, held \$0\.00$/m)

      const wallet = await get<{ balanceCents: number }>(server.baseUrl, key, `${COMMERCE}/wallet`)
      expect(wallet.balanceCents).toBe(first.sellerCents + second.sellerCents)
    } finally {
      seller.stop()
    }
  }, 120_000)
})
