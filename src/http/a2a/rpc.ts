// JSON-RPC 2.0 envelopes and the A2A 1.0 error codes the endpoint answers with.

/** A2A 1.0 JSON-RPC error codes (a2a.proto / the specification's error table). */
export const A2aErrors = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupportedOperation: -32004,
  extendedCardNotConfigured: -32007,
  versionNotSupported: -32009
} as const

export type Json = Record<string, unknown>
export const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

// A type, not an interface: an answer is a Json record (an interface has no index signature).
export type RpcError = {
  readonly jsonrpc: "2.0"
  readonly id: unknown
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
}

export const rpcError = (id: unknown, code: number, message: string, data?: unknown): RpcError => ({
  jsonrpc: "2.0",
  id: id ?? null,
  error: { code, message, ...(data !== undefined ? { data } : {}) }
})
export const rpcResult = (id: unknown, result: unknown) => ({ jsonrpc: "2.0", id, result })

/** A route's Retry-After (a 503, a 429) in seconds: JSON-RPC answers have no headers to carry it. */
export const retryAfterOf = (headers: Headers): { readonly retryAfterSeconds?: number } => {
  const value = headers.get("retry-after")
  return value !== null && /^\d+$/.test(value) ? { retryAfterSeconds: Number(value) } : {}
}
