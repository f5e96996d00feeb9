// Turns a tool's REST route response back into an MCP tool result (errors as `isError: true` with
// the typed error's message); the call's route request is made in src/http/descriptors/toolRequest.ts.
import type { ArgumentProblem } from "../descriptors/toolRequest.js"

/** An MCP `tools/call` result (the shape the SDK's CallToolResult schema accepts). */
export interface ToolResult {
  readonly [key: string]: unknown
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A tool error in the one error-body shape (status, type, message, field), without an HTTP call. */
export const argumentError = (problem: ArgumentProblem, requestId: string): ToolResult => ({
  content: [{ type: "text", text: `InvalidInput (400): ${problem.message}` }],
  structuredContent: {
    status: 400,
    _tag: "InvalidInput",
    type: "InvalidInput",
    message: problem.message,
    field: problem.field,
    requestId
  },
  isError: true
})

/**
 * The route's response as a tool result. Success: the JSON body as text, and as structured
 * content when it is an object. Failure (status ≥ 400): `isError: true`, text
 * "<type> (<status>): <message>" and the whole error body (plus `status`) as structured content.
 */
export const toToolResult = (status: number, text: string, retryAfter?: string | null): ToolResult => {
  const parsed = text === "" ? undefined : parse(text)
  if (status >= 400) {
    const body = isRecord(parsed) ? parsed : {}
    const type = typeof body.type === "string" ? body.type : typeof body._tag === "string" ? body._tag : `Http${status}`
    const message = typeof body.message === "string" ? body.message : text || `HTTP ${status}`
    // The route's Retry-After (a 503, a 429), in seconds: a tool result has no headers to carry it.
    const seconds = retryAfter != null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined
    return {
      content: [
        {
          type: "text",
          text: `${type} (${status}): ${message}${seconds !== undefined ? ` (retry after ${seconds} s)` : ""}`
        }
      ],
      structuredContent: {
        status,
        ...body,
        type,
        message,
        ...(seconds !== undefined ? { retryAfterSeconds: seconds } : {})
      },
      isError: true
    }
  }
  if (text === "") return { content: [{ type: "text", text: `(${status}, no content)` }] }
  return {
    content: [{ type: "text", text }],
    ...(isRecord(parsed) ? { structuredContent: parsed } : {})
  }
}
