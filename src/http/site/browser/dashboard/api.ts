// The dashboard JSON API as the page's script sees it: the shapes it reads, element lookup, and one
// fetch helper that turns an error body into an ApiError.

export interface Account {
  readonly email: string
  readonly name: string
}
export interface Agent {
  readonly id: string
  readonly name: string
  readonly organization: string | null
  readonly createdAt: string
}
export interface ApiKey {
  readonly id: string
  readonly agentId: string
  readonly name: string
  readonly prefix: string
  readonly permissions: ReadonlyArray<string>
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly expiresAt: string | null
  readonly revokedAt: string | null
}
export interface WebhookView {
  readonly url: string
  readonly status: string
  readonly pendingCount: number
  readonly oldestPendingAgeSeconds: number
  readonly nextAttemptAt: string | null
  readonly disabledReason: string | null
  readonly lastError: string | null
  readonly consecutiveFailures: number
}

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T
export const input = (id: string) => $<HTMLInputElement>(id)

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string
  ) {
    super(message)
  }
}

export const api = <T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json" }
  // Every write is JSON, an empty one included: the server refuses cookie writes that are not.
  if (method !== "GET") headers["content-type"] = "application/json"
  const init: RequestInit = { method, credentials: "same-origin", headers }
  if (body !== undefined) init.body = JSON.stringify(body)
  return fetch(`/api/dashboard${path}`, init).then((res) => {
    if (res.status === 204) return null as T
    return res
      .json()
      .catch(() => null)
      .then((data: { message?: unknown; field?: string } | null) => {
        if (!res.ok) {
          const message =
            data && typeof data.message === "string" ? data.message : `request failed (HTTP ${res.status})`
          throw new ApiError(res.status, message, data?.field)
        }
        return data as T
      })
  })
}
