// The OpenAPI document (src/http/openapi.ts) at /api/v1/agent/openapi.json, and the interactive
// API docs at /docs: Scalar's API reference over that document. Scalar's script (large; the one
// effect/http-api ships, so nothing is fetched from a CDN) is loaded from disk on the first visit and
// served from /docs/scalar.js with a long cache lifetime; HttpApiScalar's own layer inlines it into
// the page, which kept it resident in every server that never served /docs.
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Data, Effect, Layer } from "effect"
import { createRequire } from "node:module"
import path from "node:path"
import { pathToFileURL } from "node:url"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { apiDocument, OPENAPI_PATH } from "../openapi.js"
import { html, trusted } from "./templates/html.js"
import { DOCS_CSP } from "./templates/csp.js"

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
</head>
<body>
<script id="api-reference" type="application/json" data-configuration="${JSON.stringify({ _integration: "html" })}">${trusted(scriptJson(spec))}</script>
<script src="${DOCS_SCRIPT_PATH}"></script>
</body>
</html>`.value
    // Loaded once, on the first request for it (concurrent first requests share the one load).
    const script = yield* Effect.cached(loadScalarScript)
    return Layer.mergeAll(
      HttpRouter.add(
        "GET",
        OPENAPI_PATH,
        Effect.succeed(HttpServerResponse.text(specJson, { contentType: "application/json" }))
      ),
      HttpRouter.add(
        "GET",
        "/docs",
        Effect.succeed(
          HttpServerResponse.text(page, {
            contentType: "text/html; charset=utf-8",
            headers: { "content-security-policy": DOCS_CSP }
          })
        )
      ),
      HttpRouter.add(
        "GET",
        DOCS_SCRIPT_PATH,
        script.pipe(
          Effect.map((bytes) =>
            HttpServerResponse.uint8Array(bytes, {
              contentType: "application/javascript; charset=utf-8",
              headers: { "cache-control": "public, max-age=86400" }
            })
          ),
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
