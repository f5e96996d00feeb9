// Human pages and site files served beside the HttpApi.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, Layer } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { PLATFORM } from "../../services/discovery/document.js"
import { pageNames, renderPage } from "./pages.js"
import { pickLang } from "./lang.js"
import { AssetsLive } from "./assets.js"
import { cspOrigin, pageCsp } from "./templates/csp.js"
import { DashboardRoutesLive } from "./dashboard.js"
import { OwnerRoutesLive } from "./owner.js"

const pageRoutes = pageNames.map((name) =>
  HttpRouter.route(
    "GET",
    `/${name}`,
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const config = yield* AppConfig
      const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : undefined
      const lang = pickLang(query, request.headers["accept-language"])
      const html = renderPage(name, lang, {
        baseUrl: config.baseUrl,
        platformName: PLATFORM.name,
        version: PLATFORM.version,
        rateLimitPerMinute: config.rateLimitPerMinute,
        rateLimitPerDay: config.rateLimitPerDay,
        payments: config.payments
      })
      return HttpServerResponse.text(html, {
        contentType: "text/html; charset=utf-8",
        headers: {
          "content-language": lang === "pt" ? "pt-BR" : "en",
          vary: "Accept-Language",
          // The page's stylesheet and icon are addressed from BASE_URL, which may be another origin than the one asked.
          "content-security-policy": pageCsp({
            files: [cspOrigin(config.baseUrl)].filter((o): o is string => o !== undefined)
          })
        }
      })
    })
  )
)

export const SiteRoutesLive = Layer.mergeAll(
  HttpRouter.addAll(pageRoutes),
  DashboardRoutesLive,
  OwnerRoutesLive,
  // People arrive here from the pages' mentions of investing; the JSON for agents lives at
  // /invest/api, and the explanation for people is the white paper's token section.
  HttpRouter.add(
    "GET",
    "/invest",
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : ""
      return HttpServerResponse.redirect(`/whitepaper${query}#token`, { status: 302 })
    })
  ),
  AssetsLive
)
