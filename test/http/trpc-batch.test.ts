// A tRPC batch is bounded: at most MAX_BATCH_SIZE calls in one request (more is one typed 400 in
// tRPC's wire shape, nothing run), and every call in a batch spends what a single call would —
// one request of the key's rate limit, one anonymous write of the address's budget.
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_BATCH_SIZE } from "../../src/http/trpc/adapter.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { storageCases } from "../fixtures/db.js"
import { setClock } from "../fixtures/clock.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

let server: RuntimeServer
let agent: AgentKey

interface Answer {
  readonly status: number
  readonly bytes: number
  /** One envelope, or a batch's array of them. */
  readonly body: Envelope | ReadonlyArray<Envelope>
}

/** A procedure's answer: its result or its error. */
interface Envelope {
  readonly result?: { readonly data: unknown }
  readonly error?: { readonly message: string; readonly data: { readonly code: string } }
}
/** The answer of a single call. */
const oneCall = (body: Answer["body"]): Envelope => {
  if (Array.isArray(body)) throw new Error(`a batch's answer, not one call's: ${JSON.stringify(body).slice(0, 200)}`)
  return body as Envelope
}
/** The answers of a batch, in call order. */
const batch = (body: Answer["body"]): ReadonlyArray<Envelope> => {
  if (!Array.isArray(body)) throw new Error(`one call's answer, not a batch's: ${JSON.stringify(body).slice(0, 200)}`)
  return body
}

/** One request from `localAddress` (each test its own address, so the anonymous budgets do not meet). */
const send = (
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly headers?: Record<string, string>; readonly from?: string } = {}
) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        localAddress: options.from ?? "127.0.0.1",
        headers: {
          ...(body !== undefined
            ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
            : {}),
          ...options.headers
        }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          resolve({ status: res.statusCode ?? 0, bytes: text.length, body: JSON.parse(text) })
        })
      }
    )
    req.on("error", reject)
    req.end(body)
  })

const batchPath = (procedure: string, n: number) =>
  `/api/trpc/${Array.from({ length: n }, () => procedure).join(",")}?batch=1`
const inputs = (n: number, input: unknown) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), input]))

// One suite per storage: the idempotency and rate-limit stores differ.
for (const { name: storage, skip } of storageCases) {
  describe.skipIf(skip !== undefined)(`[${storage}]${skip ? ` — ${skip}` : ""}`, () => {
    beforeAll(async () => {
      // The clock stands still mid-minute: the budgets below are per fixed minute, and on the wall clock a
      // minute could turn between a batch and the request after it (seen under load: a 429 came back 200).
      server = await startRuntimeServer({
        storage,
        config: { rateLimitPerMinute: 5, anonymousWritesPerMinute: 4 },
        clock: setClock(Date.UTC(2026, 10, 28, 12, 0, 30)).clock
      })
      agent = await createAgentKey(server.baseUrl, ["catalog:read"])
    }, 60_000)
    afterAll(async () => {
      await server?.close()
    })

    describe(`tRPC batches [${storage}]`, () => {
      it("the maximum is small and stated", () => {
        expect(MAX_BATCH_SIZE).toBe(10)
      })

      it("an anonymous batch of 400 calls is one 400 naming the limit, not 400 answers", async () => {
        const path = batchPath("publicApi.knowledgeBase", 400)
        expect(path.length).toBeGreaterThan(9_000)
        const r = await send("GET", path, { from: "127.0.0.21" })
        expect(r.status).toBe(400)
        expect(r.bytes).toBeLessThan(1_000)
        expect(r.body).toMatchObject({
          error: {
            code: -32600,
            data: {
              code: "BAD_REQUEST",
              httpStatus: 400,
              type: "InvalidInput",
              field: "batch",
              maxBatchSize: MAX_BATCH_SIZE,
              calls: 400
            }
          }
        })
        expect(oneCall(r.body).error?.message).toContain(String(MAX_BATCH_SIZE))
      })

      it("one call over the maximum is refused before any call runs: no anonymous write is spent", async () => {
        const from = "127.0.0.22"
        const over = await send("POST", batchPath("publicApi.purchaseAccess", MAX_BATCH_SIZE + 1), {
          body: inputs(MAX_BATCH_SIZE + 1, { serviceId: 1 }),
          from
        })
        expect(over.status).toBe(400)
        expect(oneCall(over.body).error?.data).toMatchObject({ field: "batch", maxBatchSize: MAX_BATCH_SIZE })
        // The address's four anonymous writes are all still there.
        for (let i = 0; i < 4; i++)
          expect(
            (await send("POST", "/api/trpc/publicApi.purchaseAccess", { body: { serviceId: 1 }, from })).status
          ).toBe(200)
      })

      it("a batch of exactly the maximum is answered call by call", async () => {
        const r = await send("GET", batchPath("publicApi.knowledgeBase", MAX_BATCH_SIZE), { from: "127.0.0.23" })
        expect(r.status).toBe(200)
        expect(r.body).toHaveLength(MAX_BATCH_SIZE)
        for (const call of batch(r.body)) expect(call.result?.data).toBeDefined()
      })

      it("a key's batch of N spends N requests of its rate limit (5 a minute: 3 pass, then 2 of 3, then none)", async () => {
        const first = await send("GET", batchPath("portfolio.holdings", 3), { headers: agent.auth })
        expect(first.status).toBe(200)
        const second = await send("GET", batchPath("portfolio.holdings", 3), { headers: agent.auth })
        expect(second.status).toBe(207)
        const codes = batch(second.body)
          .map((c) => c.error?.data.code ?? "OK")
          .sort()
        expect(codes).toEqual(["OK", "OK", "TOO_MANY_REQUESTS"])
        const single = await send("GET", "/api/trpc/portfolio.holdings", { headers: agent.auth })
        expect(single.status).toBe(429)
      })

      it("an anonymous batch of writes spends one of the address's anonymous writes per call (4 a minute: 4 of 6 pass)", async () => {
        const r = await send("POST", batchPath("publicApi.purchaseAccess", 6), {
          body: inputs(6, { serviceId: 1 }),
          from: "127.0.0.24"
        })
        expect(r.status).toBe(207)
        const codes = batch(r.body).map((c) => c.error?.data.code ?? "OK")
        expect(codes.filter((c) => c === "OK")).toHaveLength(4)
        expect(codes.filter((c) => c === "TOO_MANY_REQUESTS")).toHaveLength(2)
        expect(
          (await send("POST", "/api/trpc/publicApi.purchaseAccess", { body: { serviceId: 1 }, from: "127.0.0.24" }))
            .status
        ).toBe(429)
      })
    })
  })
}
