// What a browser is promised for the big fixed files (the API docs page and its 3 MB script, the
// site's stylesheets and scripts): they travel compressed when it accepts brotli or gzip, decompress
// to exactly the bytes sent to a client that accepts neither, each encoding has its own ETag (so no
// cache hands gzip to a client that asked for none), and the docs fetch nothing from another origin.
// And /favicon.ico answers with the site's icon rather than a 404.
import { request } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chooseCoding, type EncodedBody } from "../../src/http/contentEncoding.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
}, 60_000)
afterAll(async () => {
  await server?.close()
})

interface Raw {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: Buffer
}

/** A GET that sends exactly the given headers and keeps the body as it came (no decompression). */
const raw = (path: string, headers: Record<string, string> = {}): Promise<Raw> =>
  new Promise((resolve, reject) => {
    const req = request(`${server.baseUrl}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

const FILES = ["/docs", "/docs/scalar.js", "/assets/site.css", "/assets/dashboard.js"]

describe("compressed fixed files", () => {
  it.each(FILES)("%s: brotli and gzip decompress to the identity bytes, each with its own ETag", async (path) => {
    const plain = await raw(path)
    expect(plain.status).toBe(200)
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(String(plain.headers.vary).toLowerCase()).toContain("accept-encoding")

    const br = await raw(path, { "accept-encoding": "gzip, deflate, br" })
    expect(br.headers["content-encoding"]).toBe("br")
    expect(br.body.byteLength).toBeLessThan(plain.body.byteLength / 2)
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)

    const gz = await raw(path, { "accept-encoding": "gzip" })
    expect(gz.headers["content-encoding"]).toBe("gzip")
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true)
  })

  it.each(["/assets/site.css", "/assets/dashboard.js"])(
    "%s: each encoding has its own ETag, and revalidates",
    async (path) => {
      const tags = await Promise.all(
        ["identity", "br", "gzip"].map(async (coding) => (await raw(path, { "accept-encoding": coding })).headers.etag)
      )
      expect(new Set(tags).size).toBe(3)
      // A revalidation with the compressed variant's ETag is still a 304, naming that variant.
      const again = await raw(path, { "accept-encoding": "br", "if-none-match": String(tags[1]) })
      expect(again.status).toBe(304)
      expect(again.headers.etag).toBe(tags[1])
    }
  )

  it("a client that refuses both codings (q=0) gets the identity bytes", async () => {
    const res = await raw("/docs/scalar.js", { "accept-encoding": "br;q=0, gzip;q=0, identity" })
    expect(res.headers["content-encoding"]).toBeUndefined()
    const plain = await raw("/docs/scalar.js")
    expect(res.body.equals(plain.body)).toBe(true)
  })

  it("the docs page tells its renderer not to fetch fonts from another origin", async () => {
    const page = (await raw("/docs")).body.toString("utf8")
    const config = /data-configuration="([^"]*)"/.exec(page)?.[1]?.replace(/&quot;/g, '"')
    expect(JSON.parse(config ?? "{}")).toMatchObject({ withDefaultFonts: false })
    expect(page).toContain('rel="icon"')
  })

  it("/favicon.ico sends the browser to the site's icon", async () => {
    const res = await raw("/favicon.ico")
    expect(res.status).toBe(301)
    const icon = await raw(String(res.headers.location))
    expect(icon.status).toBe(200)
    expect(icon.headers["content-type"]).toContain("image/svg+xml")
  })
})

describe("choosing a coding from Accept-Encoding", () => {
  const both: EncodedBody = { identity: new Uint8Array(1), br: new Uint8Array(1), gzip: new Uint8Array(1) }
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["gzip, br", "br"],
    ["br;q=0.5, gzip", "gzip"],
    ["*", "br"],
    ["*;q=0, gzip;q=0.1", "gzip"],
    ["br;q=0", "identity"],
    ["deflate", "identity"],
    ["GZIP", "gzip"],
    ["br;q=abc, gzip;q=0.2", "gzip"]
  ] as const)("%j → %s", (header, coding) => {
    expect(chooseCoding(header, both)).toBe(coding)
  })
  it("never names a variant the body does not have", () => {
    expect(chooseCoding("br", { identity: new Uint8Array(1), br: undefined, gzip: undefined })).toBe("identity")
  })
})
