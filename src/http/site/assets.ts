// The site's static files: stylesheets (styles/*.css) and the browser scripts (browser/*.ts, bundled
// by esbuild), served under /assets/ with an ETag. Their addresses stay fixed, so a browser
// revalidates (Cache-Control: no-cache) and gets 304 until a deploy changes the file. Each is
// compressed once when loaded (brotli or gzip, as the browser accepts).
//
// Where the files are: beside this module when the server runs from src (tests, `npm run dev`), or
// in site/ beside the bundle, where scripts/serverBuild.mjs copies them and writes the bundled scripts.
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { browserBuildOptions, browserEntries } from "../../../scripts/browserBuild.mjs"
import { type EncodedBody, encodeBody, encodedVariant } from "../contentEncoding.js"

/** If-None-Match names this ETag (weak or strong, of any of its encodings, or *). */
const matchesEtag = (ifNoneMatch: string | undefined, etag: string): boolean =>
  ifNoneMatch !== undefined &&
  ifNoneMatch.split(",").some(
    (t) =>
      t.trim() === "*" ||
      t
        .trim()
        .replace(/^W\//, "")
        .replace(/-(br|gzip)"$/, '"') === etag
  )

/** Each encoding of a file is its own representation, so its own ETag (RFC 9110 §8.8.3). */
const etagOf = (etag: string, coding: string | undefined) =>
  coding === undefined ? etag : `${etag.slice(0, -1)}-${coding}"`

const here = fileURLToPath(new URL(".", import.meta.url))

/** The folder holding styles/, content/ and browser/ (sources from src, or the bundled copy). */
export const siteRoot: string =
  [here, join(here, "site"), join(process.cwd(), "src", "http", "site")].find((dir) =>
    existsSync(join(dir, "styles", "site.css"))
  ) ?? here

/** A file of the site folder as text (a stylesheet, a Markdown page). */
export const siteFile = (...path: ReadonlyArray<string>): string => readFileSync(join(siteRoot, ...path), "utf8")

/** The stylesheets (styles/<name>.css), each served as /assets/<name>.css. */
export const stylesheets = ["site", "checkout"] as const

interface Asset {
  readonly body: EncodedBody
  readonly etag: string
  readonly contentType: string
}

const asset = async (text: string, contentType: string): Promise<Asset> => {
  const bytes = new TextEncoder().encode(text)
  const etag = `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 22)}"`
  return { body: await Effect.runPromise(encodeBody(bytes)), etag, contentType }
}

/**
 * The bundled browser scripts: read from site/browser/*.js when the build wrote them, else bundled
 * now from browser/*.ts with esbuild (installed with the project's dependencies wherever src runs).
 */
const browserScripts = async (): Promise<Record<string, string>> => {
  const built = browserEntries.filter((n) => existsSync(join(siteRoot, "browser", `${n}.js`)))
  if (built.length === browserEntries.length)
    return Object.fromEntries(built.map((n) => [n, siteFile("browser", `${n}.js`)]))
  const { build } = await import("esbuild")
  const out = await build({
    ...browserBuildOptions,
    entryPoints: Object.fromEntries(browserEntries.map((n) => [n, join(siteRoot, "browser", `${n}.ts`)])),
    outdir: join(siteRoot, "browser"),
    write: false
  })
  return Object.fromEntries(out.outputFiles.map((f) => [basename(f.path, ".js"), f.text]))
}

const loadAssets = Effect.promise(async () => {
  const files = new Map<string, Asset>()
  for (const name of stylesheets)
    files.set(`/assets/${name}.css`, await asset(siteFile("styles", `${name}.css`), "text/css; charset=utf-8"))
  const scripts = await browserScripts()
  for (const name of browserEntries)
    files.set(`/assets/${name}.js`, await asset(scripts[name]!, "text/javascript; charset=utf-8"))
  return files
})

/**
 * The files, read (and, from src, bundled) once. A service of the app's core, built before the port
 * is bound: building them inside the route layer (after the server listens) left a window in which
 * requests were accepted and never answered.
 */
export class SiteAssets extends Context.Service<SiteAssets, ReadonlyMap<string, Asset>>()("agent-commerce/SiteAssets") {
  static readonly layer = Layer.effect(SiteAssets, loadAssets)
}

export const AssetsLive = HttpRouter.addAll(
  Effect.map(SiteAssets, (files) =>
    [...files].map(([path, file]) =>
      HttpRouter.route("GET", path as `/${string}`, (request) => {
        const { bytes, headers } = encodedVariant(request.headers["accept-encoding"], file.body)
        const etag = etagOf(file.etag, headers["content-encoding"])
        if (matchesEtag(request.headers["if-none-match"], file.etag))
          return Effect.succeed(
            HttpServerResponse.empty({
              status: 304,
              headers: { etag, "cache-control": "public, no-cache", vary: "accept-encoding" }
            })
          )
        return Effect.succeed(
          HttpServerResponse.uint8Array(bytes, {
            contentType: file.contentType,
            headers: {
              ...headers,
              etag,
              "cache-control": "public, no-cache"
            }
          })
        )
      })
    )
  )
)
