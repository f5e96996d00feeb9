// Typed client for TypeScript agents, derived from the HttpApi definition: every endpoint typed,
// declared errors decoded as tagged errors. `makeClient({ baseUrl, apiKey })`.
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Effect } from "effect"
import { Api } from "./http/api.js"

export interface ClientOptions {
  readonly baseUrl: string
  /** An agent API key (`ak_live_…`), sent as `Authorization: Bearer`. */
  readonly apiKey?: string
  /** Extra headers on every request (e.g. a dashboard session cookie). */
  readonly headers?: Readonly<Record<string, string>>
}

/** An Effect that builds the typed client; provide `FetchHttpClient.layer` (or use `runClient`). */
export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest((request) => {
      let r = request
      if (options.apiKey) r = HttpClientRequest.bearerToken(r, options.apiKey)
      if (options.headers) r = HttpClientRequest.setHeaders(r, options.headers)
      return r
    })
  })

export type Client = Effect.Success<ReturnType<typeof makeClient>>

/** Convenience for scripts: runs `f` with a client over fetch and returns a Promise. */
export const runClient = <A, E>(options: ClientOptions, f: (client: Client) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(makeClient(options), f).pipe(Effect.provide(FetchHttpClient.layer)))

export { Api }
