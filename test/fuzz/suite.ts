// The HTTP fuzz suite, run once per storage engine by test/fuzz/http*.fuzz.test.ts: every HttpApi
// endpoint and every tRPC procedure gets inputs derived from its schemas (valid values sampled by
// effect's schema-derived Arbitrary, then combined and mutated by fast-check), plus hand-picked nasties. Asserts: never a 5xx;
// every error is the typed JSON body (REST) or a tRPC error object; invalid input is 4xx.
import { Arbitrary, Effect, Option, Schema } from "effect"
import fc from "fast-check"
import { apiGroups } from "../../src/http/routeTable.js"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Api } from "../../src/http/api.js"
import { routeTable } from "../../src/http/routeTable.js"
import { procedures } from "../../src/http/procedures.js"
import type { Procedure } from "../../src/http/trpc/procedure.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

/**
 * Property runs per endpoint and per procedure (each run is one request). Postgres gets half: its
 * own failure modes (NUL, out-of-range numbers, encodings) come mostly from the hand-picked nasties.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 30)
const runsFor = (storage: "memory" | "postgres") => (storage === "postgres" ? Math.max(1, Math.ceil(RUNS / 2)) : RUNS)
const SEED = Number(process.env.FUZZ_SEED ?? 20_251_123)
const MAX_BODY = 65_536

type AnySchema = Schema.Codec<unknown, unknown>

interface Endpoint {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly auth: "public" | "key" | "session"
  readonly pathSchema: AnySchema | undefined
  /** URL params (and, for GET/DELETE, the payload, which HttpApi reads from the query string). */
  readonly querySchema: AnySchema | undefined
  readonly bodySchema: AnySchema | undefined
}

const endpoints: ReadonlyArray<Endpoint> = (() => {
  const table = routeTable(Api)
  const out: Array<Endpoint> = []
  for (const g of apiGroups(Api)) {
    for (const e of Object.values(g.endpoints)) {
      const route = table.find((r) => r.group === g.identifier && r.name === e.identifier)
      const bodyless = e.method === "GET" || e.method === "DELETE" || e.method === "HEAD"
      const first = [...e.payload.values()][0]
      const payload = first && "schemas" in first ? (first.schemas[0] as AnySchema) : undefined
      out.push({
        id: `${e.method} ${e.path}`,
        method: e.method,
        path: e.path,
        auth: route?.auth ?? "public",
        pathSchema: e.params as AnySchema | undefined,
        querySchema: (e.query as AnySchema | undefined) ?? (bodyless ? payload : undefined),
        bodySchema: bodyless ? undefined : payload
      })
    }
  }
  return out
})()

// ---------------------------------------------------------------------------------------------
// Generators

const deep = (n: number): unknown => (n === 0 ? 1 : { a: deep(n - 1) })
const deepArray = (n: number): unknown => (n === 0 ? [] : [deepArray(n - 1)])

/** Values that break naive handlers: wrong types, bad cents, odd strings, deep structures. */
const nastyValues: ReadonlyArray<unknown> = [
  null,
  true,
  false,
  0,
  -1,
  -0.01,
  0.5,
  1.5,
  1e21,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  "",
  " ",
  "0",
  "-1",
  "1e3",
  "NaN",
  "Infinity",
  "null",
  "true",
  "x".repeat(20_000),
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "🙂".repeat(500),
  "\u202erdt",
  "ǅ̈́ͅ",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "../../etc/passwd",
  "%00",
  "\r\nX-Injected: 1",
  "ak_live_",
  "agt_",
  "key_x",
  [],
  [null],
  ["a", 1, null],
  {},
  { a: 1 },
  deep(100),
  deepArray(100)
]

const nasty = fc.constantFrom(...nastyValues)

/** Schema-derived encoded values (valid by construction), or anything when no arbitrary exists. */
const validEncoded = (schema: AnySchema): fc.Arbitrary<unknown> => {
  try {
    const encode = Schema.encodeUnknownOption(schema)
    // effect 4's Arbitrary is its own generator (no fast-check inside): sample valid values from
    // the schema once, deterministically, and let fast-check pick among them.
    const samples = Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(schema), { count: 40, seed: SEED }))
      .map((a) => encode(a))
      .filter(Option.isSome)
      .map((o) => o.value)
    return samples.length > 0 ? fc.constantFrom(...samples) : fc.anything()
  } catch {
    return fc.anything()
  }
}

type Json = unknown
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A mutation of an encoded value: drop, replace or add a field, or replace the whole value. */
const mutated = (base: fc.Arbitrary<Json>): fc.Arbitrary<Json> =>
  fc
    .tuple(base, fc.nat(), nasty, fc.constantFrom("drop", "replace", "add", "whole", "stringify", "wrap"))
    .map(([value, pick, bad, how]) => {
      if (how === "whole" || !isRecord(value)) return how === "wrap" ? [value] : bad
      const keys = Object.keys(value)
      const key = keys.length > 0 ? keys[pick % keys.length] : "x"
      const copy: Record<string, unknown> = { ...value }
      switch (how) {
        case "drop":
          delete copy[key]
          return copy
        case "replace":
          copy[key] = bad
          return copy
        case "add":
          copy[`extra_${pick % 7}`] = bad
          return copy
        case "stringify":
          copy[key] = JSON.stringify(copy[key] ?? null)
          return copy
        default:
          return [copy]
      }
    })

const inputFor = (schema: AnySchema | undefined): fc.Arbitrary<Json> =>
  schema
    ? fc.oneof(
        { weight: 1, arbitrary: validEncoded(schema) },
        { weight: 3, arbitrary: mutated(validEncoded(schema)) },
        { weight: 1, arbitrary: fc.jsonValue() }
      )
    : fc.oneof(fc.constant(undefined), fc.jsonValue(), nasty)

/** What the server will see after JSON (NaN → null, -0 → 0, undefined dropped). */
const roundTrip = (u: unknown): unknown => (u === undefined ? undefined : (JSON.parse(JSON.stringify(u)) as unknown))

const decodes = (schema: AnySchema, u: unknown) => Schema.decodeUnknownResult(schema)(u)._tag === "Success"

/** Path params as strings: generated from the schema, or nasty strings. */
const pathParamsFor = (
  schema: AnySchema | undefined,
  names: ReadonlyArray<string>
): fc.Arbitrary<Record<string, string>> => {
  const nastyString = fc.oneof(
    fc.constantFrom("", "x", "0", "-1", "1.5", "%00", "..", "agt_", "key_", "a".repeat(300), "🙂", "\u202e", "null"),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "grapheme", maxLength: 20 })
  )
  const anyParams = fc.record(
    Object.fromEntries(names.map((n) => [n, nastyString])) as Record<string, fc.Arbitrary<string>>
  )
  if (!schema) return anyParams
  const valid = validEncoded(schema)
    .filter(isRecord)
    .map((r) => Object.fromEntries(names.map((n) => [n, String(r[n] ?? "x")])))
  return fc.oneof(valid, anyParams)
}

/** Query params: each value a string (or repeated), from the schema's encoded form or nasties. */
const queryFor = (schema: AnySchema | undefined): fc.Arbitrary<Record<string, unknown> | undefined> => {
  if (!schema)
    return fc.oneof(
      fc.constant(undefined),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 3 })
    )
  return inputFor(schema).map((u) => (isRecord(u) ? u : undefined))
}

const toQuery = (q: Record<string, unknown> | undefined) => {
  if (!q) return ""
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) {
    if (Array.isArray(v)) v.forEach((x) => params.append(k, typeof x === "string" ? x : JSON.stringify(x)))
    else params.append(k, typeof v === "string" ? v : (JSON.stringify(v) ?? ""))
  }
  const s = params.toString()
  return s && s.length < 6000 ? `?${s}` : ""
}

// ---------------------------------------------------------------------------------------------
// Assertions

interface Answer {
  readonly status: number
  readonly text: string
  readonly contentType: string
}

const describeCase = (what: string, a: Answer) => `${what} → ${a.status} ${a.text.slice(0, 300)}`

/** REST: < 500 always; errors are JSON { type, message, requestId }; `mustFail` → 4xx. */
const checkRest = (what: string, a: Answer, mustFail: boolean) => {
  expect(a.status, describeCase(what, a)).toBeLessThan(500)
  if (mustFail) expect(a.status, describeCase(what, a)).toBeGreaterThanOrEqual(400)
  if (a.status >= 400) {
    expect(a.contentType, describeCase(what, a)).toMatch(/^application\/json/)
    const body = JSON.parse(a.text) as Record<string, unknown>
    expect(typeof body.type, describeCase(what, a)).toBe("string")
    expect(typeof body.message, describeCase(what, a)).toBe("string")
    expect(typeof body.requestId, describeCase(what, a)).toBe("string")
  }
}

/** tRPC: < 500 always; errors are { error: { message, code, data: { code, httpStatus } } }. */
const checkTrpcBody = (what: string, body: unknown, status: number) => {
  const entries = Array.isArray(body) ? body : [body]
  for (const entry of entries) {
    expect(isRecord(entry), what).toBe(true)
    const e = entry as Record<string, unknown>
    if ("error" in e) {
      const err = e.error as Record<string, unknown>
      expect(typeof err.message, what).toBe("string")
      expect(typeof err.code, what).toBe("number")
      const data = err.data as Record<string, unknown>
      expect(typeof data.code, what).toBe("string")
      expect(data.httpStatus, what).toBeLessThan(500)
      if (!Array.isArray(body)) expect(data.httpStatus, what).toBe(status)
    } else {
      expect(e, what).toHaveProperty("result")
    }
  }
}
const checkTrpc = (what: string, a: Answer, mustFail: boolean) => {
  expect(a.status, describeCase(what, a)).toBeLessThan(500)
  if (mustFail) expect(a.status, describeCase(what, a)).toBeGreaterThanOrEqual(400)
  const body = JSON.parse(a.text) as unknown
  // Refusals by the global HTTP middleware (413, 411, NUL) come before the adapter: the REST body.
  if (a.status >= 400 && isRecord(body) && !("error" in body)) return checkRest(what, a, mustFail)
  checkTrpcBody(describeCase(what, a), body, a.status)
}

// ---------------------------------------------------------------------------------------------
// The suites (memory always; Postgres when a database is configured)

/** The whole fuzz suite against one storage engine (one test file per engine, so they run in parallel). */
export const fuzzSuite = (storage: "memory" | "postgres") => {
  describeEachStorage(
    "HTTP fuzz",
    () => {
      let server: TestServer
      let key: AgentKey
      beforeAll(async () => {
        server = await startServer({
          storage,
          config: {
            rateLimitPerMinute: 1_000_000,
            rateLimitPerDay: 100_000_000,
            maxBodyBytes: MAX_BODY,
            workers: false,
            negotiationDelayMs: 0
          }
        })
        key = await createAgentKey(server.baseUrl, [
          "catalog:read",
          "evaluate",
          "acquire",
          "invest",
          "create",
          "commerce:*"
        ])
      })
      afterAll(async () => {
        await server?.close()
      })

      const send = async (
        method: string,
        p: string,
        init: { body?: string | Uint8Array; contentType?: string | null; headers?: Record<string, string> } = {}
      ): Promise<Answer> => {
        const headers: Record<string, string> = { ...init.headers }
        if (init.body !== undefined && init.contentType !== null)
          headers["content-type"] = init.contentType ?? "application/json"
        const body: BodyInit | undefined =
          typeof init.body === "string" || init.body === undefined ? init.body : Buffer.from(init.body)
        // A request that is never answered is a finding too (a hung fiber per request): fail fast, saying so.
        // A long poll (the seller's order list) answers by its own bound, waitMs, up to 25 s: a valid wait
        // is shortened to 200 ms so a case still answers in time; an invalid one is sent as generated.
        const url = new URL(p, server.baseUrl)
        const wait = url.searchParams.get("waitMs")
        if (wait !== null && /^\d+$/.test(wait) && Number(wait) > 200 && Number(wait) <= 25_000) {
          url.searchParams.set("waitMs", "200")
        }
        const res = await fetch(url, {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: AbortSignal.timeout(5000)
        }).catch((e: unknown) => {
          throw new Error(
            `${method} ${p} (content-type ${headers["content-type"] ?? "none"}): no answer in 5 s (${String(e)})`
          )
        })
        return { status: res.status, text: await res.text(), contentType: res.headers.get("content-type") ?? "" }
      }
      const credentials = (e: Endpoint): Record<string, string> =>
        e.auth === "key" ? key.auth : e.auth === "session" ? { cookie: key.cookie } : {}

      const concrete = (template: string, params: Record<string, string>) =>
        template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? "x"))

      it("walks a non-trivial route table", () => {
        expect(endpoints.length).toBeGreaterThanOrEqual(8)
        expect(Object.keys(procedures).length).toBeGreaterThanOrEqual(4)
      })

      for (const e of endpoints) {
        const names = [...e.path.matchAll(/:(\w+)/g)].map((m) => m[1])

        it(`${e.id}: schema-derived and mutated inputs never 5xx; invalid ones are typed 4xx`, async () => {
          await fc.assert(
            fc.asyncProperty(
              pathParamsFor(e.pathSchema, names),
              queryFor(e.querySchema),
              inputFor(e.bodySchema),
              async (params, query, body) => {
                const sent = roundTrip(body)
                const invalid =
                  (e.bodySchema !== undefined && !decodes(e.bodySchema, sent ?? {})) || // no body is sent as {}
                  // An empty or dot-segment param routes elsewhere (`/catalog/` is the list): no expectation then.
                  (e.pathSchema !== undefined &&
                    !decodes(e.pathSchema, params) &&
                    Object.values(params).every((v) => v !== "" && v !== "." && v !== "..")) ||
                  (e.querySchema !== undefined &&
                    query !== undefined &&
                    !decodes(e.querySchema, Object.fromEntries(new URLSearchParams(toQuery(query).slice(1)))))
                const p = `${concrete(e.path, params)}${toQuery(query)}`
                const bodyText =
                  e.bodySchema !== undefined || (e.method !== "GET" && e.method !== "DELETE")
                    ? JSON.stringify(sent ?? {})
                    : undefined
                const a = await send(e.method, p, { body: bodyText, headers: credentials(e) })
                checkRest(`${e.method} ${p} body=${(bodyText ?? "").slice(0, 200)}`, a, invalid)
              }
            ),
            { numRuns: runsFor(storage), seed: SEED, endOnFailure: true }
          )
        })
      }

      /** A path to the endpoint with valid params (when the schema can generate them), so the body decoder is reached. */
      const validPath = (e: Endpoint) => {
        const names = [...e.path.matchAll(/:(\w+)/g)].map((m) => m[1])
        const params = e.pathSchema
          ? (fc.sample(validEncoded(e.pathSchema), { numRuns: 1, seed: SEED })[0] as Record<string, unknown>)
          : {}
        return concrete(e.path, Object.fromEntries(names.map((n) => [n, String(params[n] ?? `${n}_fuzz`)])))
      }
      /** The endpoints that read a body (HttpApi reads a GET's or DELETE's payload from the query string). */
      const bodyEndpoints = endpoints.filter((e) => e.method !== "GET" && e.method !== "DELETE")

      for (const e of bodyEndpoints) {
        it(`${e.id}: hand-picked nasty bodies are typed 4xx (or handled), never 5xx`, async () => {
          const path = validPath(e)
          const headers = credentials(e)
          const hasBody = e.bodySchema !== undefined
          const cases: Array<[string, { body?: string | Uint8Array; contentType?: string | null }, boolean]> = [
            ["invalid JSON", { body: '{"serviceId": ' }, hasBody],
            ["single quotes", { body: "{'a': 1}" }, hasBody],
            ["NaN literal", { body: '{"amountCents": NaN, "proposedPriceCents": NaN}' }, hasBody],
            ["Infinity literal", { body: '{"amountCents": Infinity}' }, hasBody],
            ["trailing comma", { body: '{"a": 1,}' }, hasBody],
            ["bare string", { body: '"hello"' }, e.bodySchema !== undefined && !decodes(e.bodySchema, "hello")],
            ["null", { body: "null" }, e.bodySchema !== undefined && !decodes(e.bodySchema, null)],
            [
              "100-deep object",
              { body: JSON.stringify(deep(100)) },
              e.bodySchema !== undefined && !decodes(e.bodySchema, deep(100))
            ],
            ["100-deep array", { body: JSON.stringify(deepArray(100)) }, hasBody],
            ["10k-deep array", { body: "[".repeat(10_000) + "]".repeat(10_000) }, hasBody],
            [
              "prototype pollution",
              { body: '{"__proto__": {"admin": true}, "constructor": {"prototype": {"admin": true}}}' },
              false
            ],
            ["empty body with JSON type", { body: "" }, false],
            ["text/plain", { body: '{"a":1}', contentType: "text/plain" }, false],
            ["form-urlencoded", { body: "a=1&b=2", contentType: "application/x-www-form-urlencoded" }, false],
            [
              "multipart garbage",
              {
                body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
                contentType: "multipart/form-data; boundary=x"
              },
              false
            ],
            ["no content type", { body: '{"a":1}', contentType: null }, false],
            ["binary garbage", { body: new Uint8Array([0xff, 0xfe, 0x00, 0x81, 0xc3, 0x28]) }, hasBody],
            [
              "lone surrogates and NUL",
              { body: '{"name": "\\ud800\\u0000", "serviceId": "\\udfff", "terms": "\\u0000"}' },
              false
            ],
            [
              "negative and float cents",
              { body: JSON.stringify({ amountCents: -100, proposedPriceCents: 0.5, priceCents: -0.01 }) },
              false
            ],
            [
              "overflowing cents",
              { body: '{"amountCents": 1e400, "proposedPriceCents": 9007199254740993, "priceCents": 1e21}' },
              false
            ]
          ]
          for (const [name, init, mustFail] of cases) {
            checkRest(`${e.id} ${name}`, await send(e.method, path, { ...init, headers }), mustFail)
          }
          // Over the limit with a Content-Length: 413 before the body is read.
          const huge = await send(e.method, path, { body: JSON.stringify({ pad: "x".repeat(MAX_BODY + 10) }), headers })
          expect(huge.status, describeCase(`${e.id} huge body`, huge)).toBe(413)
          expect(JSON.parse(huge.text)).toMatchObject({ type: "PayloadTooLarge", limitBytes: MAX_BODY })
        })
      }

      // A body without Content-Length (chunked) cannot be size-checked before reading: 411.
      for (const e of bodyEndpoints.filter((e) => e.bodySchema !== undefined)) {
        it(`${e.id}: a chunked body over the limit is refused 411 before it is read`, async () => {
          const path = validPath(e)
          const headers = credentials(e)
          const chunk = new TextEncoder().encode(`"${"x".repeat(16_384)}",`)
          let sent = 0
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (sent === 0) controller.enqueue(new TextEncoder().encode('{"pad": ['))
              if (sent > MAX_BODY * 3) {
                controller.enqueue(new TextEncoder().encode('""]}'))
                controller.close()
                return
              }
              sent += chunk.length
              controller.enqueue(chunk)
            }
          })
          const res = await fetch(`${server.baseUrl}${path}`, {
            method: e.method,
            headers: { ...headers, "content-type": "application/json" },
            body: stream,
            duplex: "half"
          } as RequestInit & { duplex: "half" }).catch((err: unknown) => err as Error)
          if (res instanceof Error) throw new Error(`${e.id} chunked huge body: no HTTP answer (${res.message})`)
          const text = await res.text()
          expect(res.status, `${e.id} chunked huge body → ${res.status} ${text.slice(0, 200)}`).toBe(411)
          expect(JSON.parse(text)).toMatchObject({ type: "LengthRequired" })
        })
      }

      // tRPC procedures: queries over GET ?input=, mutations over POST; single and batched.
      for (const [name, procedure] of Object.entries(procedures as Record<string, Procedure<unknown>>)) {
        const schema = procedure.input as AnySchema | undefined
        it(`tRPC ${name}: schema-derived and mutated inputs never 5xx; errors are tRPC error objects`, async () => {
          await fc.assert(
            fc.asyncProperty(inputFor(schema), fc.boolean(), async (input, batched) => {
              const sent = roundTrip(input)
              const invalid = schema !== undefined && !decodes(schema, sent)
              const json = JSON.stringify(batched ? { 0: sent } : sent) ?? ""
              const suffix = batched ? "?batch=1" : ""
              const a =
                procedure.type === "query"
                  ? await send(
                      "GET",
                      `/api/trpc/${name}${suffix}${json.length < 6000 ? `${suffix ? "&" : "?"}input=${encodeURIComponent(json)}` : ""}`,
                      { headers: key.auth }
                    )
                  : await send("POST", `/api/trpc/${name}${suffix}`, { body: json, headers: key.auth })
              checkTrpc(`${name} input=${json.slice(0, 200)}`, a, invalid && json.length < 6000)
            }),
            { numRuns: runsFor(storage), seed: SEED, endOnFailure: true }
          )
        })
      }

      it("tRPC: wrong methods, unknown procedures, malformed and nasty inputs are tRPC errors, never 5xx", async () => {
        const names = Object.keys(procedures)
        // All must fail with a tRPC error except the mixed batch (207).
        const cases: Array<[string, string, { body?: string; contentType?: string | null }]> = [
          ["GET", `/api/trpc/${names[0]}?input=%7Bnope`, {}],
          ["GET", `/api/trpc/${names[0]}?input=NaN`, {}],
          ["GET", "/api/trpc/nope.nothing", {}],
          ["GET", "/api/trpc/__proto__", {}],
          ["GET", "/api/trpc/constructor", {}],
          ["GET", `/api/trpc/${names.join(",")},nope?batch=1&input=%7B%7D`, {}],
          ["GET", `/api/trpc/${encodeURIComponent("\u0000")}`, {}],
          ["POST", `/api/trpc/${names[0]}`, { body: "{}" }],
          ["POST", `/api/trpc/${names[0]}`, { body: "{not json" }],
          ["POST", `/api/trpc/${names[0]}?batch=1`, { body: "[1,2,3]" }],
          ["POST", `/api/trpc/${names[0]}`, { body: "x".repeat(10), contentType: "text/plain" }],
          ["PUT", `/api/trpc/${names[0]}`, { body: "{}" }],
          ["DELETE", `/api/trpc/${names[0]}`, {}],
          ["PATCH", `/api/trpc/${names[0]}`, { body: "{}" }]
        ]
        for (const [method, p, init] of cases) {
          const a = await send(method, p, { ...init, headers: key.auth })
          checkTrpc(`${method} ${p}`, a, !(method === "GET" && p.includes("batch=1")))
        }
        for (const name of names) {
          const a = await send("GET", `/api/trpc/${name}?input=${encodeURIComponent(JSON.stringify(deep(100)))}`, {
            headers: key.auth
          })
          checkTrpc(`${name} with a 100-deep input`, a, false)
          const deeper =
            procedures[name as keyof typeof procedures].type === "query"
              ? await send("GET", `/api/trpc/${name}?input=${"[".repeat(5000)}${"]".repeat(5000)}`, {
                  headers: key.auth
                })
              : await send("POST", `/api/trpc/${name}`, {
                  body: `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
                  headers: key.auth
                })
          checkTrpc(`${name} with a 5000-deep input`, deeper, false)
        }
        const huge = await send("POST", `/api/trpc/${names[0]}`, {
          body: JSON.stringify({ pad: "x".repeat(MAX_BODY + 10) })
        })
        expect(huge.status).toBe(413)
      })

      it("unrouted paths are typed 404s naming the route, a known path's other methods typed 405s naming the allowed ones (a NUL in the path is the NUL refusal, 400), never 5xx", async () => {
        for (const p of ["/nope", "/api/v1/agent/../../etc/passwd", `/api/v1/agent/${"a".repeat(4000)}`]) {
          const a = await send("GET", p)
          checkRest(`GET ${p}`, a, true)
          expect(a.status, describeCase(`GET ${p}`, a)).toBe(404)
          expect(JSON.parse(a.text), describeCase(`GET ${p}`, a)).toMatchObject({ type: "NotFound", resource: "route" })
        }
        for (const [method, p] of [
          ["PATCH", "/api/v1/agent/me"],
          ["DELETE", "/health"]
        ] as const) {
          const a = await send(method, p, method === "DELETE" ? {} : { body: "{}" })
          checkRest(`${method} ${p}`, a, true)
          expect(a.status, describeCase(`${method} ${p}`, a)).toBe(405)
          expect(JSON.parse(a.text), describeCase(`${method} ${p}`, a)).toMatchObject({
            type: "MethodNotAllowed",
            allow: ["GET"]
          })
        }
        // docs/errors.md promises 405 here too, but the discovery document (a route outside the
        // HttpApi) answers another method with 404: a known gap, so only "typed 4xx, never 5xx" is held.
        checkRest("POST /api/discover", await send("POST", "/api/discover", { body: "{}" }), true)
        const nul = await send("GET", "/api/v1/agent/%00")
        checkRest("GET /api/v1/agent/%00", nul, true)
        expect(nul.status, describeCase("GET /api/v1/agent/%00", nul)).toBe(400)
        expect(JSON.parse(nul.text)).toMatchObject({ type: "InvalidInput" })
        expect(JSON.parse(nul.text).message).toMatch(/NUL/)
      })
    },
    { only: [storage] }
  )
}
