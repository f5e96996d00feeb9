// The access log: one line per request (method, route template, status, duration, request id, the
// caller's agent when known) at Info, at Warn when slower than SLOW_REQUEST_MS (docs/operations.md).
// Never the raw path, query, headers or body: those can hold keys, session ids or e-mail addresses.
import { Context, Effect, LogLevel, References } from "effect"

/** A request slower than this is logged at Warn instead of Info. */
export const SLOW_REQUEST_MS = 1000

/**
 * What the layers below the global middleware learn about the request while it runs. One object per
 * request, made by the global middleware and filled in by the router (route) and the auth middleware
 * (agent, account): the log line is written after the handler, when those contexts are gone.
 */
export interface RequestNote {
  route: string | undefined
  agentId: string | undefined
  accountId: string | undefined
}
export const currentRequestNote = Context.Reference<RequestNote | undefined>("agent-commerce/currentRequestNote", {
  defaultValue: () => undefined
})

export const newRequestNote = (): RequestNote => ({ route: undefined, agentId: undefined, accountId: undefined })

/** Records the authenticated caller on the current request's note (outside a request: nothing). */
export const noteCaller = (caller: { readonly agentId?: string | undefined; readonly accountId: string }) =>
  Effect.map(currentRequestNote, (note) => {
    if (note === undefined) return
    note.accountId = caller.accountId
    if (caller.agentId !== undefined) note.agentId = caller.agentId
  })

export interface RequestLogLine {
  readonly method: string
  readonly route: string | undefined
  readonly status: number
  readonly durationMs: number
  readonly requestId: string
  readonly agentId: string | undefined
  readonly accountId: string | undefined
}

/**
 * Writes the access-log line: message `METHOD /route/:template STATUS N ms`, the fields as
 * annotations. Below the minimum log level nothing is built: no annotations, no message.
 */
export const logRequest = (line: RequestLogLine) =>
  Effect.withFiber((fiber) =>
    LogLevel.isGreaterThan(
      fiber.getRef(References.MinimumLogLevel),
      line.durationMs > SLOW_REQUEST_MS ? "Warn" : "Info"
    )
      ? Effect.void
      : writeRequestLine(line)
  )

const writeRequestLine = (line: RequestLogLine) => {
  const route = line.route ?? "(no route)"
  const annotations: Record<string, string | number> = {
    http: "request",
    method: line.method,
    route,
    status: line.status,
    durationMs: line.durationMs,
    requestId: line.requestId
  }
  if (line.agentId !== undefined) annotations.agentId = line.agentId
  if (line.accountId !== undefined) annotations.accountId = line.accountId
  const message = `${line.method} ${route} ${line.status} ${line.durationMs} ms`
  const log =
    line.durationMs > SLOW_REQUEST_MS ? Effect.logWarning(`slow request: ${message}`) : Effect.logInfo(message)
  return log.pipe(Effect.annotateLogs(annotations))
}
