// Agent-facing files beside the HttpApi: /api/discover, /llms.txt, /robots.txt, /sitemap.xml, the
// plugin, MCP and A2A manifests, the MCP tool list and the home page — all generated from config,
// the HttpApi route table and the procedure table, encoded once and served with ETags.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { DISCOVERY_CACHE_TTL, PLATFORM } from "../../services/discovery/document.js"
import { Discovery } from "../../services/discovery/Discovery.js"
import { errorResponse } from "../errors.js"
import { currentRequestId } from "../requestId.js"
import { pickLang } from "./lang.js"
import { renderHome } from "./pages.js"
import { cspOrigin, pageCsp } from "./templates/csp.js"
import { agentTools } from "../descriptors/tools.js"
import { discoveryCatalog, LOGO_PATH, MCP_TOOLS_PATH } from "./agentFiles/catalog.js"
import {
  agentCard,
  aiPluginManifest,
  llmsTxt,
  logoSvg,
  mcpManifest,
  mcpToolsDocument,
  robotsTxt,
  sitemapXml
} from "./agentFiles/contents.js"

// ---------------------------------------------------------------------------
// Serving: bodies encoded once, strong ETags, If-None-Match → 304
// ---------------------------------------------------------------------------

const encoder = new TextEncoder()
const etagOf = (body: Uint8Array) => `"${createHash("sha1").update(body).digest("base64url")}"`
const PUBLIC_CACHE = `public, max-age=${DISCOVERY_CACHE_TTL}`

/** True when an If-None-Match header names this entity tag (weak comparison, RFC 9110 §13.1.2). */
export const matchesEtag = (ifNoneMatch: string | undefined, etag: string): boolean => {
  if (ifNoneMatch === undefined) return false
  const bare = etag.replace(/^W\//, "")
  return ifNoneMatch.split(",").some((t) => {
    const tag = t.trim()
    return tag === "*" || tag.replace(/^W\//, "") === bare
  })
}

interface Prepared {
  readonly body: Uint8Array
  readonly etag: string
  readonly contentType: string
}

const prepare = (text: string, contentType: string): Prepared => {
  const body = encoder.encode(text)
  return { body, etag: etagOf(body), contentType }
}
const prepareJson = (value: unknown) => prepare(`${JSON.stringify(value, null, 2)}\n`, "application/json")

const respond = (request: HttpServerRequest.HttpServerRequest, file: Prepared, headers: Record<string, string>) =>
  matchesEtag(request.headers["if-none-match"], file.etag)
    ? HttpServerResponse.empty({ status: 304, headers: { ...headers, etag: file.etag } })
    : HttpServerResponse.uint8Array(file.body, {
        contentType: file.contentType,
        headers: { ...headers, etag: file.etag }
      })

const staticRoute = (path: `/${string}`, file: Prepared, cacheControl = PUBLIC_CACHE) =>
  HttpRouter.route("GET", path, (request) => Effect.succeed(respond(request, file, { "cache-control": cacheControl })))

export const AgentFilesLive = HttpRouter.addAll(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const discovery = yield* Discovery
    const base = config.baseUrl
    const siteCtx = {
      baseUrl: base,
      platformName: PLATFORM.name,
      version: PLATFORM.version,
      rateLimitPerMinute: config.rateLimitPerMinute,
      rateLimitPerDay: config.rateLimitPerDay,
      payments: config.payments
    }
    const homeCsp = pageCsp({ files: [cspOrigin(base)].filter((o): o is string => o !== undefined) })
    const home = {
      en: prepare(renderHome("en", siteCtx), "text/html; charset=utf-8"),
      pt: prepare(renderHome("pt", siteCtx), "text/html; charset=utf-8")
    }

    const discover = HttpRouter.route("GET", "/api/discover", (request) =>
      discovery
        .document({
          routes: discoveryCatalog,
          authorization: request.headers.authorization,
          userAgent: request.headers["user-agent"]
        })
        .pipe(
          Effect.map((doc) =>
            respond(
              request,
              { body: doc.body, etag: doc.etag, contentType: "application/json" },
              {
                "cache-control": doc.personalised ? `private, max-age=${DISCOVERY_CACHE_TTL}` : PUBLIC_CACHE,
                vary: "Authorization, User-Agent"
              }
            )
          ),
          Effect.catch((e) => Effect.map(currentRequestId, (requestId) => errorResponse(e, requestId)))
        )
    )

    const homeRoute = HttpRouter.route("GET", "/", (request) => {
      const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : undefined
      const lang = pickLang(query, request.headers["accept-language"])
      return Effect.succeed(
        respond(request, home[lang], {
          "cache-control": PUBLIC_CACHE,
          vary: "Accept-Language",
          "content-language": lang === "pt" ? "pt-BR" : "en",
          "content-security-policy": homeCsp
        })
      )
    })

    return [
      discover,
      homeRoute,
      staticRoute("/llms.txt", prepare(llmsTxt(config, discoveryCatalog), "text/plain; charset=utf-8")),
      staticRoute("/robots.txt", prepare(robotsTxt(base, discoveryCatalog), "text/plain; charset=utf-8")),
      staticRoute("/sitemap.xml", prepare(sitemapXml(base), "application/xml; charset=utf-8")),
      staticRoute("/.well-known/ai-plugin.json", prepareJson(aiPluginManifest(base))),
      staticRoute("/.well-known/mcp.json", prepareJson(mcpManifest(base, agentTools))),
      staticRoute("/.well-known/agent-card.json", prepareJson(agentCard(base, { x402: Option.isSome(config.x402) }))),
      staticRoute(MCP_TOOLS_PATH, prepareJson(mcpToolsDocument(agentTools))),
      staticRoute(LOGO_PATH, prepare(logoSvg, "image/svg+xml"), "public, max-age=86400")
    ] as const
  })
)
