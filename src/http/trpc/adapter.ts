// tRPC HTTP wire format (v11, no transformer) over a table of procedures that call the services.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Context, Effect, Result, Schema } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { encodeError, firstSchemaIssue, RETRY_AFTER_SECONDS, statusOf } from "../errors.js"
import { MAX_JSON_DEPTH, scanJson } from "../middleware/inputGuard.js"
import { type Caller, CurrentCaller } from "../../services/keys/Caller.js"
import { canonicalPath, guardPath, queryOf } from "../routePath.js"
import type { Access, Procedure } from "./procedure.js"

const PREFIX = "/api/trpc/"

/**
 * Most calls one batch may name (tRPC's own `maxBatchSize`). A page batches the few queries it
 * makes in one tick; the bound keeps a request's work to what that many requests would do, where
 * an unbounded batch let one small GET run any number of calls and answer with a body of any
 * size. Over it: one 400, nothing run.
 */
export const MAX_BATCH_SIZE = 10
/** Calls of one batch that run at once: a batch may not take more of the server than a few requests. */
const BATCH_CONCURRENCY = 2

const codeByStatus: Record<number, [string, number]> = {
  400: ["BAD_REQUEST", -32600],
  401: ["UNAUTHORIZED", -32001],
  402: ["PAYMENT_REQUIRED", -32002],
  403: ["FORBIDDEN", -32003],
  404: ["NOT_FOUND", -32004],
  405: ["METHOD_NOT_SUPPORTED", -32005],
  408: ["TIMEOUT", -32008],
  409: ["CONFLICT", -32009],
  412: ["PRECONDITION_FAILED", -32012],
  413: ["PAYLOAD_TOO_LARGE", -32013],
  415: ["UNSUPPORTED_MEDIA_TYPE", -32015],
  422: ["UNPROCESSABLE_CONTENT", -32022],
  429: ["TOO_MANY_REQUESTS", -32029],
  500: ["INTERNAL_SERVER_ERROR", -32603],
  501: ["NOT_IMPLEMENTED", -32603],
  503: ["SERVICE_UNAVAILABLE", -32603]
}

interface TrpcError {
  readonly error: {
    readonly message: string
    readonly code: number
    readonly data: Record<string, unknown> & { code: string; httpStatus: number; path?: string }
  }
}
type Outcome = { readonly status: number; readonly body: { readonly result: { readonly data: unknown } } | TrpcError }

const errorOutcome = (
  status: number,
  message: string,
  path: string | undefined,
  extra: Record<string, unknown> = {}
): Outcome => {
  const [code, rpc] = codeByStatus[status] ?? codeByStatus[500]
  return {
    status,
    body: { error: { message, code: rpc, data: { ...extra, code, httpStatus: status, ...(path ? { path } : {}) } } }
  }
}

/** Maps a typed service error into a tRPC error (same status as REST, extra fields kept under data). */
const fromError = (error: unknown, path: string): Outcome => {
  const encoded = encodeError(error)
  const { _tag, message, ...rest } = encoded
  return errorOutcome(statusOf(error), typeof message === "string" ? message : String(_tag), path, {
    type: _tag,
    ...rest
  })
}

/**
 * How a procedure's access rule is enforced: the caller (undefined for public procedures), or a
 * typed 401/403. Supplied by ProcedureAuthLive (./auth.ts).
 */
export interface ProcedureAuthService {
  readonly authorize: (
    access: Access,
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<Caller | undefined, unknown>
}
export class ProcedureAuth extends Context.Service<ProcedureAuth, ProcedureAuthService>()(
  "agent-commerce/ProcedureAuth"
) {}

const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  // Too deep overflows the stack when a decode error is formatted; NUL and unpaired surrogates cannot be stored (test/fuzz).
  const scan = scanJson(text)
  if (scan.depth > MAX_JSON_DEPTH || scan.nul || scan.loneSurrogate) return { ok: false }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** The first decode issue: its path inside the input (undefined for the input as a whole) and message. */
const firstIssue = firstSchemaIssue

/** An InvalidInput naming its field; "input" when the input as a whole is wrong. */
const invalid = (field: string | undefined, message: string) =>
  new InvalidInput({ message: `${field ?? "input"}: ${message}`, field: field ?? "input" })

/**
 * Decodes a procedure's input. No input at all (no `?input`, an empty body, or a batch without this
 * call's key) is read as `{}` when the schema does not accept `undefined` itself: an object input
 * then names its first missing field (`sessionId: is missing`), exactly as `?input={}` does; any
 * other input shape is "input: is required".
 */
export const decodeInput = (
  schema: Schema.Codec<unknown, unknown>,
  raw: unknown
): Result.Result<unknown, InvalidInput> => {
  const decode = Schema.decodeUnknownResult(schema, { errors: "first", onExcessProperty: "ignore" })
  const decoded = decode(raw)
  if (decoded._tag === "Success") return Result.succeed(decoded.success)
  if (raw !== undefined) {
    const issue = firstIssue(decoded.failure)
    return Result.fail(invalid(issue.path, issue.message))
  }
  const asEmpty = decode({})
  if (asEmpty._tag === "Success") return Result.succeed(asEmpty.success)
  const issue = firstIssue(asEmpty.failure)
  return Result.fail(issue.path !== undefined ? invalid(issue.path, issue.message) : invalid(undefined, "is required"))
}

type Table = Readonly<Record<string, Procedure<unknown>>>
/** The services a procedure table needs (the caller is provided by the adapter). */
export type TableContext<P extends Table> = Exclude<P[keyof P] extends Procedure<infer R> ? R : never, CurrentCaller>

const callOne = <P extends Table>(
  procedures: P,
  path: string,
  method: string,
  rawInput: unknown,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Outcome, never, TableContext<P> | ProcedureAuth> =>
  callOneBody(procedures, path, method, rawInput, request) as Effect.Effect<
    Outcome,
    never,
    TableContext<P> | ProcedureAuth
  >

/** callOne's body, its generator function made once (docs/effect4.md). */
const callOneBody = Effect.fnUntraced(function* (
  procedures: Table,
  path: string,
  method: string,
  rawInput: unknown,
  request: HttpServerRequest.HttpServerRequest
) {
  const procedure = Object.hasOwn(procedures, path) ? procedures[path] : undefined
  if (!procedure) return errorOutcome(404, `No procedure found on path "${path}"`, path)
  const expected = procedure.type === "query" ? "GET" : "POST"
  if (method !== expected) {
    return errorOutcome(405, `Unsupported ${method}-request to ${procedure.type} procedure at path "${path}"`, path)
  }
  const auth = yield* ProcedureAuth
  // Access first, input second — the same order as the REST middleware (401/403 before 400).
  const run = Effect.gen(function* () {
    const caller = yield* auth.authorize(procedure.access, request)
    let input: unknown = undefined
    if (procedure.input) {
      const decoded = decodeInput(procedure.input, rawInput)
      if (decoded._tag === "Failure") return yield* Effect.fail(decoded.failure)
      input = decoded.success
    }
    const handled = procedure.handler(input)
    // Public procedures never ask for the caller; authenticated ones always get one.
    return yield* caller ? Effect.provideService(handled, CurrentCaller, caller) : handled
  })
  return yield* run.pipe(
    Effect.map((data): Outcome => ({ status: 200, body: { result: { data } } })),
    Effect.catch((e) => Effect.succeed(fromError(e, path))),
    Effect.catchDefect((defect) =>
      Effect.logError("procedure defect", defect).pipe(Effect.as(errorOutcome(500, "internal error", path)))
    )
  ) as Effect.Effect<Outcome, never, TableContext<Table>>
})

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const respond = (status: number, body: unknown) => HttpServerResponse.jsonUnsafe(body, { status })

/** The handler for every `/api/trpc/...` request. */
export const trpcHandler = Effect.fnUntraced(function* <P extends Table>(procedures: P) {
  const request = yield* HttpServerRequest.HttpServerRequest
  // The path as the router matched it (`//api/trpc/…`, `/API/TRPC/…`); procedure names keep their case.
  const path = canonicalPath(request.url)
  const searchParams = new URLSearchParams(queryOf(request.url))
  const pathPart = guardPath(request.url).startsWith(PREFIX) ? safeDecode(path.slice(PREFIX.length)) : ""
  const isBatch = searchParams.get("batch") === "1"
  const paths = isBatch ? pathPart.split(",") : [pathPart]
  const method = request.method === "HEAD" ? "GET" : request.method
  if (paths.length > MAX_BATCH_SIZE) {
    return respond(
      400,
      errorOutcome(
        400,
        `Batch call exceeds maximum size: ${paths.length} calls, at most ${MAX_BATCH_SIZE} in one request`,
        undefined,
        {
          type: "InvalidInput",
          field: "batch",
          maxBatchSize: MAX_BATCH_SIZE,
          calls: paths.length
        }
      ).body
    )
  }

  // Inputs: GET ?input=<json>, POST body <json>; batches key them "0", "1", …
  let raw: unknown = undefined
  if (method === "GET") {
    const q = searchParams.get("input")
    if (q !== null) {
      const parsed = parseJson(q)
      if (!parsed.ok)
        return respond(400, errorOutcome(400, "input is not valid JSON", paths[0], { field: "input" }).body)
      raw = parsed.value
    }
  } else if (method === "POST") {
    const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
    if (text.trim() !== "") {
      const parsed = parseJson(text)
      if (!parsed.ok) return respond(400, errorOutcome(400, "body is not valid JSON", paths[0]).body)
      raw = parsed.value
    }
  } else {
    return respond(405, errorOutcome(405, `Unsupported ${method}-request`, paths[0]).body)
  }

  if (!isBatch) {
    const outcome = yield* callOne(procedures, paths[0], method, raw, request)
    return respond(outcome.status, outcome.body)
  }
  const inputs = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>
  // Each call is authorized on its own, so each spends what a single call would (a key's rate
  // limit, an anonymous write's budget).
  const outcomes = yield* Effect.forEach(paths, (p, i) => callOne(procedures, p, method, inputs[String(i)], request), {
    concurrency: BATCH_CONCURRENCY
  })
  const statuses = new Set(outcomes.map((o) => o.status))
  const status = statuses.size === 1 ? outcomes[0].status : 207
  // A 207 whose calls include a 503 says when to retry them, as a whole-batch 503 does.
  const response = respond(
    status,
    outcomes.map((o) => o.body)
  )
  return statuses.has(503)
    ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
    : response
})

/** Router layer: every method under /api/trpc/*. */
export const trpcRoutes = <P extends Table>(procedures: P) => HttpRouter.add("*", `${PREFIX}*`, trpcHandler(procedures))
