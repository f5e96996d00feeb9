// The Idempotency-Key of the request being served and whom it belongs to: request data, set by the
// idempotency middleware (and cleared by the MCP and A2A surfaces around each inner call), read by
// the handlers and passed to the service methods that dedupe at the domain level as arguments.
import { Context, Effect } from "effect"

/** The Idempotency-Key of the request being served. */
export const currentIdempotencyKey = Context.Reference<string | undefined>("agent-commerce/currentIdempotencyKey", {
  defaultValue: () => undefined
})

/** Who the request's Idempotency-Key belongs to: a hash of its credential, or of its address when anonymous. */
export const currentIdempotencyScope = Context.Reference<string>("agent-commerce/currentIdempotencyScope", {
  defaultValue: () => ""
})

/** The key and its scope, as the services that take them expect. */
export const requestIdempotency: Effect.Effect<{ readonly key: string | undefined; readonly scope: string }> =
  Effect.map(Effect.zip(currentIdempotencyKey, currentIdempotencyScope), ([key, scope]) => ({ key, scope }))
