// The request side of the OpenAPI contract, on every storage: for every operation, requests made
// from the served document alone (valid ones and near misses) are accepted or refused as the
// document says. A request the document calls valid is never refused 400 (or answered 5xx); one it
// calls invalid is refused 400 naming a field the document finds at fault. The only exceptions are
// the rules no schema can state (a cursor the server issued, a template that exists, a signature
// over the body), pinned below with the field the refusal names and why no schema can say it; the
// document must state exactly these, no more and no fewer.
import { Option, Redacted } from "effect"
import fc from "fast-check"
import Stripe from "stripe"
import { afterAll, beforeAll, expect, it } from "vitest"
import { OPENAPI_PATH } from "../../src/http/openapi.js"
import { createAgentKey, type AgentKey } from "../fixtures/agents.js"
import { makeRequestContract, type ClientRequest, type RequestContract } from "../fixtures/contract.js"
import { asOpenApiDocument, type Parameter } from "../fixtures/openapiDocument.js"
import { generators, type Generators } from "../fixtures/requestArbitraries.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { startServer, type TestServer } from "../fixtures/server.js"

/** Runs per operation (each run one request); FUZZ_RUNS raises it for a longer search. */
const RUNS = Number(process.env.CONTRACT_RUNS ?? 24)
const SEED = Number(process.env.CONTRACT_SEED ?? 20_261_126)

/**
 * The refusals a valid request may still meet, written here and not taken from the server: a 400
 * for a request the document calls valid passes only when it names one of these fields of its
 * operation. Each is a rule that reads the server's state or the meaning of a value, so no schema
 * can state it; the operation's description must (checked below). A new rule in the server is a
 * new line here, made on purpose.
 */
const EXEMPT: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "payments.webhook": { "Stripe-Signature": "a signature over the exact body with the server's secret" },
  "mpp.invoke": { "Payment-Authorization": "a credential answering a challenge this server issued" },
  "projects.create": {
    templateId: "a template of the catalogue (the server's data)",
    inputs: "each input's content decodes as its encoding and is of its kind, all within the size limit"
  },
  "dashboard.createKey": { expiresAt: "in the future (the server's clock)" },
  "dashboard.createAgent": { dailyLimitCents: "not above the monthly limit the new wallet will have" },
  "webhooks.put": { url: "a public host the server may deliver to (resolved by the server)" },
  "commerce.publishService": {
    tiers: "tier ids unique within the service",
    fulfilment: "push with a deliverable address, simulated only for the platform's sellers"
  },
  "commerce.updateService": {
    tiers: "tier ids unique within the service",
    fulfilment: "push with a deliverable address, simulated only for the platform's sellers"
  },
  "commerce.updateWallet": { dailyLimitCents: "not above the monthly limit the wallet will have after the change" },
  "commerceDashboard.updateWallet": {
    dailyLimitCents: "not above the monthly limit the wallet will have after the change"
  },
  "projects.catalog": { minPriceCents: "not above maxPriceCents" },
  "projects.session": { sessionId: "a session of this agent, in a state that allows the step" },
  "invest.invest": { amountCents: "enough for one whole token at the offering's price" }
}
/**
 * The processor's webhook is signed over the exact body (verified before the body is read): a
 * request that sends the header gets a real signature with the server's secret (made by the Stripe
 * SDK, not the server's code), so its body is judged; one that leaves the header out is refused for it.
 */
const WEBHOOK_SECRET = "whsec_contract_requests_0123456789"

const exemptFields = (operationId: string) =>
  new Set(Object.keys(EXEMPT[operationId] ?? {}).map((f) => f.toLowerCase()))

/** The fields an operation's description names in its sentence of rules beyond the schemas. */
const RULES_SENTENCE = "Beyond the schemas, 400 naming the field unless:"
const statedFields = (description: string): ReadonlyArray<string> => {
  const at = description.indexOf(RULES_SENTENCE)
  if (at < 0) return []
  return [...description.slice(at + RULES_SENTENCE.length).matchAll(/`([^`]+)` is /g)].map((m) => m[1]!)
}

/** Parameters whose values only the server issues (a page's nextCursor): omitted, never invented. */
const ISSUED = new Set(["cursor"])

/**
 * A valid request with `waitMs` may be held that long before it is answered (listOrders' long poll
 * of an empty first page, up to 25 s: it was 83 s of this file's 124 s per storage). A refusal is
 * answered before any wait, so such a request still unanswered after HELD_MS has been accepted:
 * it counts as accepted and its answer is not awaited. A request the document calls invalid is
 * always awaited, so a refusal the server fails to give is still seen. A refusal comes back in a few
 * ms from this in-process server, tens on a loaded machine: 400 ms tells the two apart with room (it
 * was 1 s, ~9 held requests per storage, ~6 s of waiting each).
 */
const HELD_MS = 400

const printableAscii = (s: string) => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(s)

describeEachStorage("the document's requests", (storage) => {
  let server: TestServer
  let contract: RequestContract
  let gen: Generators
  let key: AgentKey
  beforeAll(async () => {
    server = await startServer({
      storage,
      config: {
        rateLimitPerMinute: 1_000_000,
        rateLimitPerDay: 100_000_000,
        workers: false,
        negotiationDelayMs: 0,
        stripeWebhookSecret: Option.some(Redacted.make(WEBHOOK_SECRET))
      }
    })
    const doc = asOpenApiDocument(await (await fetch(`${server.baseUrl}${OPENAPI_PATH}`)).json())
    contract = makeRequestContract(doc)
    gen = generators(doc)
    key = await createAgentKey(server.baseUrl, [
      "catalog:read",
      "evaluate",
      "acquire",
      "invest",
      "create",
      "commerce:*",
      "webhooks:manage"
    ])
  })
  afterAll(() => server?.close())

  it("covers every operation of the document, whose descriptions state exactly the exemptions pinned here", () => {
    expect(contract.operations().length).toBeGreaterThan(60)
    const stated = Object.fromEntries(
      contract
        .operations()
        .map((id) => [id, statedFields(contract.operation(id)!.op.description ?? "")] as const)
        .filter(([, fields]) => fields.length > 0)
    )
    const pinned = Object.fromEntries(Object.entries(EXEMPT).map(([id, fields]) => [id, Object.keys(fields)]))
    expect(stated).toEqual(pinned)
  })

  /** The request for one generated case, sent with the credentials the operation takes; "held" (see HELD_MS) when `holds`. */
  const send = async (operationId: string, request: ClientRequest, holds: boolean) => {
    const { path, method, op } = contract.operation(operationId)!
    const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(request.params?.[name] ?? ""))
    const query = new URLSearchParams(Object.entries(request.query ?? {})).toString()
    const security = JSON.stringify(op.security ?? [])
    const headers: Record<string, string> = { ...request.headers }
    if (security.includes("bearer")) Object.assign(headers, key.auth)
    // Sign-out would end the session the other operations run under: it is sent without one.
    if (path.startsWith("/api/dashboard/") && operationId !== "dashboardAuth.signOut") headers.cookie = key.cookie
    if (request.body !== undefined) headers["content-type"] = "application/json"
    const body = request.body !== undefined ? JSON.stringify(request.body) : undefined
    const signature = Object.keys(headers).find((h) => h.toLowerCase() === "stripe-signature")
    if (operationId === "payments.webhook" && signature !== undefined)
      headers[signature] = Stripe.webhooks.generateTestHeaderString({ payload: body ?? "", secret: WEBHOOK_SECRET })
    let res: Response
    let text: string
    try {
      res = await fetch(`${server.baseUrl}${url}${query ? `?${query}` : ""}`, {
        method: method.toUpperCase(),
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(holds ? { signal: AbortSignal.timeout(HELD_MS) } : {})
      })
      text = await res.text()
    } catch (e) {
      if (holds && e instanceof DOMException && e.name === "TimeoutError") return "held" as const
      throw e
    }
    let answer: Record<string, unknown> = {}
    try {
      answer = JSON.parse(text)
    } catch {}
    return { status: res.status, body: answer, text, contentType: res.headers.get("content-type") ?? "" }
  }

  /** Generated requests for an operation: all parts valid, or one part (a parameter or the body) a near miss. */
  const requests = (operationId: string): fc.Arbitrary<ClientRequest> => {
    const parameters = contract
      .parameters(operationId)
      .filter((p) => p.name !== "Idempotency-Key" && !ISSUED.has(p.name))
    const { op } = contract.operation(operationId)!
    const bodySchema = op.requestBody?.content?.["application/json"]?.schema
    const parts = [...parameters.map((p) => `${p.in}:${p.name}`), ...(op.requestBody ? ["body"] : [])]
    const asText = (v: unknown) => (typeof v === "string" ? v : (JSON.stringify(v) ?? ""))
    const valueOf = (p: Parameter, spoiled: boolean): fc.Arbitrary<string | undefined> => {
      const arb = spoiled ? fc.oneof(gen.invalid(p.schema), fc.constant(undefined)) : gen.valid(p.schema)
      const value = arb.map((v) => (v === undefined ? undefined : asText(v)))
      if (p.in === "path") return value.filter((v) => v !== undefined && v !== "" && v !== "." && v !== "..")
      if (p.in === "header") return value.map((v) => v?.trim()).filter((v) => v === undefined || printableAscii(v))
      return spoiled || p.required ? value : fc.option(value, { nil: undefined })
    }
    return fc.constantFrom("none", ...parts).chain((spoil) => {
      const values = Object.fromEntries(
        parameters.map((p) => [`${p.in}:${p.name}`, valueOf(p, spoil === `${p.in}:${p.name}`)])
      )
      const body = op.requestBody
        ? spoil === "body"
          ? gen.invalid(bodySchema)
          : gen.valid(bodySchema)
        : fc.constant(undefined)
      return fc.record({ values: fc.record(values), body }).map(({ values: v, body: b }) => {
        const pick = (place: string) =>
          Object.fromEntries(
            Object.entries(v).flatMap(([k, value]) =>
              k.startsWith(`${place}:`) && value !== undefined ? [[k.slice(place.length + 1), value as string]] : []
            )
          )
        // A body-less dashboard write still says it is JSON (its document body is `{}` or anything).
        return {
          params: pick("path"),
          query: pick("query"),
          headers: pick("header"),
          body: b === undefined && op.requestBody?.required ? {} : b
        }
      })
    })
  }

  const operations = () => contract.operations()
  // The operation list comes from the served document, known only once the server runs: one test walks them all.
  it("every operation accepts the requests the document calls valid and refuses the others with 400", async () => {
    const failures: Array<string> = []
    const counts: Record<string, { valid: number; invalid: number }> = {}
    for (const operationId of operations()) {
      const tally = (counts[operationId] = { valid: 0, invalid: 0 })
      const allowed = exemptFields(operationId)
      // Checked, not asserted: every operation is walked, and the failures are reported together below.
      const details = await fc.check(
        fc.asyncProperty(requests(operationId), async (request) => {
          const faults = contract.faults(operationId, request)
          const holds = faults.length === 0 && Number(request.query?.waitMs ?? 0) > 0
          const answer = await send(operationId, request, holds)
          if (answer === "held") {
            tally.valid++
            return
          }
          const at = `${operationId} ${JSON.stringify(request).slice(0, 400)} → ${answer.status} ${answer.text.slice(0, 300)}`
          expect(answer.status, at).toBeLessThan(500)
          // The input a 400 names: its `field` ("" for the request as a whole), or the header a signature or payment refusal is about.
          const field = String(
            answer.body.field ??
              (answer.body.type === "InvalidSignature"
                ? "Stripe-Signature"
                : answer.contentType.includes("problem")
                  ? "payment-authorization"
                  : "")
          ).toLowerCase()
          if (faults.length === 0) tally.valid++
          else tally.invalid++
          // A valid request is refused 400 only for a rule no schema can state, naming its field; an
          // invalid one is always refused 400, naming an input the document finds at fault (not just any field).
          const spoiled = faults.flatMap((f) => f.fields.map((name) => name.toLowerCase()))
          const text = faults.map((f) => f.text).join("; ")
          const wrong =
            faults.length === 0
              ? answer.status === 400 && !allowed.has(field.split(/[.[]/)[0])
                ? `the document calls this valid: ${at}`
                : undefined
              : answer.status !== 400
                ? `the document refuses it (${text}), the answer is not 400: ${at}`
                : !spoiled.includes(field)
                  ? `the 400 names ${JSON.stringify(field)}, the document faults ${JSON.stringify(spoiled)} (${text}): ${at}`
                  : undefined
          expect(wrong === undefined, wrong).toBe(true)
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true }
      )
      if (details.failed) {
        const why = details.errorInstance instanceof Error ? details.errorInstance.message.split("\n")[0] : ""
        failures.push(
          `${operationId}: ${why} | ${((await fc.asyncDefaultReportMessage(details)) ?? "").split("\n").slice(0, 4).join(" | ")}`
        )
      }
    }
    if (failures.length > 0) console.log(failures.join("\n\n"))
    expect(failures).toEqual([])
    // Not vacuous: every operation with any input met both kinds of request.
    for (const [operationId, tally] of Object.entries(counts)) {
      expect(tally.valid, `${operationId}: no valid request was generated`).toBeGreaterThan(0)
      const inputs =
        contract.parameters(operationId).some((p) => p.name !== "Idempotency-Key" && !ISSUED.has(p.name)) ||
        contract.operation(operationId)!.op.requestBody?.content?.["application/json"]?.schema?.type !== undefined
      expect(!inputs || tally.invalid > 0, `${operationId}: no invalid request was generated`).toBe(true)
    }
  }, 600_000)
})
