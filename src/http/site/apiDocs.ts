// The OpenAPI document (src/http/openapi.ts) at /api/v1/agent/openapi.json, and the interactive
// API docs at /docs: Scalar's API reference over that document. Scalar's script (large; the one
// effect/http-api ships, so nothing is fetched from a CDN) is loaded from disk on the first visit and
// served from /docs/scalar.js with a long cache lifetime; HttpApiScalar's own layer inlines it into
// the page, which kept it resident in every server that never served /docs. The page and the script
// are compressed once, on their first request (brotli or gzip as the browser accepts), and Scalar is
// told not to fetch its fonts from its own CDN (the CSP would refuse them anyway; system fonts show).
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Data, Effect, Layer } from "effect"
import { createRequire } from "node:module"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { apiDocument, OPENAPI_PATH } from "../openapi.js"
import { html, trusted } from "./templates/html.js"
import { DOCS_CSP } from "./templates/csp.js"
import { encodeBody, encodedVariant } from "../contentEncoding.js"
import { LOGO_PATH } from "./agentFiles/catalog.js"

export const DOCS_SCRIPT_PATH = "/docs/scalar.js"

/** The docs page's script could not be read from the installed effect package. */
class ScalarScriptUnavailable extends Data.TaggedError("ScalarScriptUnavailable")<{ readonly cause: unknown }> {}

/** The script effect/http-api ships for HttpApiScalar (an internal module, so found by path). */
const loadScalarScript = Effect.tryPromise({
  try: async () => {
    const entry = createRequire(import.meta.url).resolve("effect/http-api")
    const mod = (await import(pathToFileURL(path.join(path.dirname(entry), "internal", "httpApiScalar.js")).href)) as {
      readonly javascript?: string
      readonly default?: { readonly javascript?: string }
    }
    const source = mod.javascript ?? mod.default?.javascript
    if (typeof source !== "string") throw new Error("effect/http-api's Scalar script was not found")
    return new TextEncoder().encode(source)
  },
  catch: (cause) => new ScalarScriptUnavailable({ cause })
})

/** JSON for a <script type="application/json"> element: `<` escaped so it cannot close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c")

export const ApiDocsRoutesLive = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    // Built once per server: its `servers` entry is this server's BASE_URL.
    const spec = apiDocument(config.baseUrl)
    const specJson = JSON.stringify(spec)
    // Scalar reads its configuration from the element's data-configuration attribute: set in the
    // markup, so the page has no inline script.
    const page = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${spec.info.title}</title>
<link rel="icon" href="${LOGO_PATH}" type="image/svg+xml">
</head>
<body>
<script id="api-reference" type="application/json" data-configuration="${JSON.stringify({ _integration: "html", withDefaultFonts: false })}">${trusted(scriptJson(spec))}</script>
<script src="${DOCS_SCRIPT_PATH}"></script>
</body>
</html>`.value
    // Loaded and compressed once, on the first request for each (concurrent first requests share it).
    const script = yield* Effect.cached(Effect.flatMap(loadScalarScript, encodeBody))
    const pageBody = yield* Effect.cached(encodeBody(new TextEncoder().encode(page)))
    const acceptEncoding = Effect.map(HttpServerRequest.HttpServerRequest, (r) => r.headers["accept-encoding"])
    return Layer.mergeAll(
      HttpRouter.add(
        "GET",
        OPENAPI_PATH,
        Effect.succeed(HttpServerResponse.text(specJson, { contentType: "application/json" }))
      ),
      HttpRouter.add(
        "GET",
        "/docs",
        Effect.gen(function* () {
          const { bytes, headers } = encodedVariant(yield* acceptEncoding, yield* pageBody)
          return HttpServerResponse.uint8Array(bytes, {
            contentType: "text/html; charset=utf-8",
            headers: { ...headers, "content-security-policy": DOCS_CSP }
          })
        })
      ),
      HttpRouter.add(
        "GET",
        DOCS_SCRIPT_PATH,
        Effect.zip(script, acceptEncoding).pipe(
          Effect.map(([body, accept]) => {
            const { bytes, headers } = encodedVariant(accept, body)
            return HttpServerResponse.uint8Array(bytes, {
              contentType: "application/javascript; charset=utf-8",
              headers: { ...headers, "cache-control": "public, max-age=86400" }
            })
          }),
          Effect.catch((cause) =>
            Effect.logError("the API docs script could not be loaded", cause).pipe(
              Effect.as(
                HttpServerResponse.text("the API docs script is unavailable", {
                  status: 503,
                  contentType: "text/plain; charset=utf-8"
                })
              )
            )
          )
        )
      )
    )
  })
)
