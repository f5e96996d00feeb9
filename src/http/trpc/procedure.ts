// Procedure definitions for the tRPC-wire adapter: input schema, access rule, and the service call.
import type { Effect, Schema } from "effect"
import type { Permission } from "../../schema/keys/keys.js"

export type Access =
  | { readonly _tag: "public" }
  /** A bearer key (with the permission, when one is named) or a dashboard session. */
  | { readonly _tag: "authenticated"; readonly permission?: Permission }

export interface Procedure<R = never> {
  readonly type: "query" | "mutation"
  readonly description: string
  readonly access: Access
  readonly input?: Schema.Codec<unknown, unknown>
  /** What a successful call returns (documentation: the /docs page lists it; the handler is typed by it). */
  readonly output: Schema.Top
  // A method, so a handler typed by its own input schema fits (method parameters are bivariant).
  handler(input: unknown): Effect.Effect<unknown, unknown, R>
}

export const publicAccess: Access = { _tag: "public" }
export const authenticated = (permission?: Permission): Access => ({ _tag: "authenticated", permission })

export const query = <A, I, Out, E, R>(options: {
  readonly description: string
  readonly access: Access
  readonly input?: Schema.Codec<A, I>
  readonly output: Schema.Codec<Out, unknown>
  readonly handler: (input: A) => Effect.Effect<Out, E, R>
}): Procedure<R> => ({ type: "query", ...options })

export const mutation = <A, I, Out, E, R>(options: {
  readonly description: string
  readonly access: Access
  readonly input?: Schema.Codec<A, I>
  readonly output: Schema.Codec<Out, unknown>
  readonly handler: (input: A) => Effect.Effect<Out, E, R>
}): Procedure<R> => ({ type: "mutation", ...options })
