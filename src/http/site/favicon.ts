// /favicon.ico: browsers ask for it on every page that names no icon (and some ask regardless).
// The site's icon is the SVG logo; the old address sends there, cacheably, instead of a 404.
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { LOGO_PATH } from "./agentFiles/catalog.js"

export const FaviconLive = HttpRouter.add(
  "GET",
  "/favicon.ico",
  Effect.succeed(
    HttpServerResponse.redirect(LOGO_PATH, { status: 301, headers: { "cache-control": "public, max-age=86400" } })
  )
)
