// Security events: one structured log line each (sign-in failures and lockouts, keys created and
// revoked, permission and policy denials, webhook address changes), with the request id, the
// account / agent and the client address — never a secret, key, password or cookie (docs/operations.md).
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { currentRequestId } from "./requestId.js"

export type SecurityEvent =
  | "signin.failed"
  | "signin.throttled"
  | "anonymous.throttled"
  | "key.created"
  | "key.revoked"
  | "access.denied"
  | "policy.denied"
  | "webhook.changed"
  | "webhook.secret_rotated"

/** Fields that may be logged: ids, names of permissions and reasons; nothing secret. */
export interface SecurityFields {
  readonly accountId?: string | undefined
  readonly agentId?: string | undefined
  readonly keyId?: string | undefined
  readonly permission?: string | undefined
  readonly reason?: string | undefined
  readonly url?: string | undefined
}

/** Logs one security event at Warn (the level operators keep), annotated for JSON logs. */
export const securityEvent = Effect.fnUntraced(function* (event: SecurityEvent, fields: SecurityFields = {}) {
  const requestId = yield* currentRequestId
  const request = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
  const clientAddress = Option.match(request, {
    onNone: () => "",
    onSome: (r) => Option.getOrElse(r.remoteAddress, () => "unknown")
  })
  const annotations: Record<string, string> = { security: event, requestId, clientAddress }
  for (const [k, v] of Object.entries(fields)) if (typeof v === "string" && v !== "") annotations[k] = v
  const detail = Object.entries(annotations)
    .filter(([k]) => k !== "security")
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")
  yield* Effect.logWarning(`security ${event} ${detail}`).pipe(Effect.annotateLogs(annotations))
})
