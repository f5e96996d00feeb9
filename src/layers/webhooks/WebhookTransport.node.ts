// The Node implementation of the WebhookTransport port: the URL policy (scheme, credentials, every
// resolved address public) checked at configuration and again at each delivery, and one POST over
// node:http(s) pinned to the address just checked (no second DNS lookup to rebind), with a connect
// timeout (a dead address fails fast), a response timeout and a cap on the response body.
import { Effect, Layer } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import http from "node:http"
import https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { InvalidInput } from "../../schema/platform/errors.js"
import { CONNECT_TIMEOUT_MS, DELIVERY_TIMEOUT_MS, MAX_RESPONSE_BYTES } from "../../services/webhooks/policy.js"
import {
  type WebhookRequest,
  type WebhookResponse,
  WebhookTransport,
  type WebhookTransportService
} from "../../services/webhooks/WebhookTransport.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { isAllowedAddress } from "./addresses.js"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

export interface TransportOptions {
  /** Development and tests: 127.0.0.0/8 and ::1 become reachable (nothing else does). */
  readonly allowLoopback: boolean
  /** Production: https only. */
  readonly httpsOnly: boolean
  /** The whole attempt up to the response headers (default DELIVERY_TIMEOUT_MS). */
  readonly timeoutMs?: number
  /** The TCP connection alone (default CONNECT_TIMEOUT_MS); never more than `timeoutMs`. */
  readonly connectTimeoutMs?: number
  readonly maxResponseBytes?: number
  /** Name resolution (default: the system resolver, every address). Tests swap it to simulate DNS. */
  readonly resolve?: (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>
}

const systemResolve = (hostname: string) => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * Why a webhook host is refused, the same words for every reason. The classifier
 * (src/layers/webhooks/addresses.ts) still decides; only its verdict leaves the service.
 */
export const UNREACHABLE =
  "is not an address webhooks may reach: they deliver to public internet addresses only (loopback needs WEBHOOKS_ALLOW_LOOPBACK, outside production)"

/** Syntax and scheme; returns the parsed URL or why it is refused. */
export const parseWebhookUrl = (raw: string, httpsOnly: boolean): URL | string => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "url must be an absolute http(s) URL"
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "url must use https (or http outside production)"
  if (httpsOnly && url.protocol !== "https:") return "url must use https"
  if (url.username !== "" || url.password !== "") return "url must not contain credentials (user:password@)"
  if (url.hash !== "") return "url must not contain a fragment"
  if (url.hostname === "") return "url must name a host"
  return url
}

const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

const withTimeout = <A>(promise: Promise<A>, ms: number, message: string): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms)
    promise.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })

/** A `lookup` that answers with the address already checked, whatever the resolver would say now. */
const pinnedLookup = (target: ResolvedAddress): LookupFunction =>
  ((
    _hostname: string,
    options: { all?: boolean } | ((...args: Array<unknown>) => void),
    callback?: (...args: Array<unknown>) => void
  ) => {
    const cb = (typeof options === "function" ? options : callback)!
    const all = typeof options === "object" && options !== null && options.all === true
    if (all) cb(null, [{ address: target.address, family: target.family }])
    else cb(null, target.address, target.family)
  }) as unknown as LookupFunction

/** Printable excerpt of a response body for the attempt log. */
const excerpt = (chunks: ReadonlyArray<Buffer>): string =>
  Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\p{Cc}+/gu, " ")
    .trim()
    .slice(0, 200)

export const makeNodeTransport = (options: TransportOptions): WebhookTransportService => {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const connectTimeoutMs = Math.min(options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, timeoutMs)
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES
  const resolve = options.resolve ?? systemResolve

  /** The one refusal text, whatever the reason (docs/webhooks.md). */
  const unreachable = (host: string) => `${host} ${UNREACHABLE}`

  /** Every address the host has must be allowed (a name with one private address among public ones is refused). */
  const resolveChecked = async (
    url: URL,
    budgetMs: number
  ): Promise<ResolvedAddress | { readonly refused: string }> => {
    const host = bareHost(url)
    let addresses: ReadonlyArray<ResolvedAddress>
    if (isIP(host) !== 0) {
      addresses = [{ address: host, family: isIP(host) }]
    } else {
      try {
        addresses = await withTimeout(resolve(host), budgetMs, `resolving ${host} timed out`)
      } catch {
        return { refused: unreachable(host) }
      }
    }
    // One answer for every refusal (no name, private, loopback, link-local, metadata …): which rule
    // fired would tell a caller what the service's network holds (an SSRF oracle).
    if (addresses.length === 0 || addresses.some((a) => !isAllowedAddress(a.address, options.allowLoopback)))
      return { refused: unreachable(host) }
    return addresses[0]
  }

  const check = Effect.fnUntraced(function* (raw: string) {
    const url = parseWebhookUrl(raw, options.httpsOnly)
    if (typeof url === "string") return yield* Effect.fail(new InvalidInput({ message: url, field: "url" }))
    const target = yield* Effect.promise(() => resolveChecked(url, timeoutMs))
    if ("refused" in target)
      return yield* Effect.fail(new InvalidInput({ message: `url refused: ${target.refused}`, field: "url" }))
  })

  const send = (request: WebhookRequest) =>
    Effect.callback<WebhookResponse>((resume) => {
      const started = performance.now()
      let finished = false
      let req: http.ClientRequest | undefined
      let connectTimer: ReturnType<typeof setTimeout> | undefined
      let status: number | null = null
      const chunks: Array<Buffer> = []
      let kept = 0
      const whole: Array<Buffer> | undefined = request.keepBody === true ? [] : undefined
      let ended = false

      const outcome = (): Omit<WebhookResponse, "durationMs"> => {
        if (status === null) return { ok: false, status: null, error: "no response" }
        if (status >= 200 && status < 300) {
          if (whole === undefined) return { ok: true, status, error: null }
          if (!ended)
            return { ok: false, status, error: `HTTP ${status}: the body did not arrive whole within the cap` }
          return { ok: true, status, error: null, body: Buffer.concat(whole).toString("utf8") }
        }
        const text = excerpt(chunks)
        const redirect = status >= 300 && status < 400 ? " (redirects are not followed)" : ""
        return { ok: false, status, error: `HTTP ${status}${redirect}${text ? `: ${text}` : ""}` }
      }
      const finish = (r: Omit<WebhookResponse, "durationMs">) => {
        if (finished) return
        finished = true
        clearTimeout(timer)
        clearTimeout(connectTimer)
        req?.destroy()
        resume(Effect.succeed({ ...r, durationMs: Math.max(0, Math.round(performance.now() - started)) }))
      }
      // Headers must arrive within the timeout; once they have, the status decides (body still capped).
      const timer = setTimeout(
        () =>
          finish(status === null ? { ok: false, status: null, error: `timed out after ${timeoutMs} ms` } : outcome()),
        timeoutMs
      )

      const url = parseWebhookUrl(request.url, options.httpsOnly)
      if (typeof url === "string") {
        finish({ ok: false, status: null, error: `refused: ${url}` })
      } else {
        resolveChecked(url, timeoutMs).then(
          (target) => {
            if (finished) return
            if ("refused" in target) return finish({ ok: false, status: null, error: `refused: ${target.refused}` })
            const client = url.protocol === "https:" ? https : http
            req = client.request(
              {
                protocol: url.protocol,
                hostname: bareHost(url),
                port: url.port === "" ? undefined : Number(url.port),
                path: `${url.pathname}${url.search}`,
                method: "POST",
                headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
                // A fresh connection to the checked address every time: no pooled socket, no re-resolution.
                agent: false,
                lookup: pinnedLookup(target)
              },
              (res) => {
                status = res.statusCode ?? null
                res.on("data", (chunk: Buffer) => {
                  // Keep the first 4 KiB for the excerpt; count the rest against the cap.
                  if (kept < 4096) chunks.push(chunk.subarray(0, 4096 - kept))
                  kept += chunk.length
                  if (whole !== undefined && kept <= maxBytes) whole.push(chunk)
                  if (kept > maxBytes) finish(outcome()) // over the cap: stop reading, drop the connection
                })
                res.on("end", () => {
                  ended = kept <= maxBytes
                  finish(outcome())
                })
                res.on("error", () => finish(outcome()))
                res.on("close", () => finish(outcome()))
              }
            )
            // A black-holed address never completes the handshake: give up on it well before the response timeout.
            req.on("socket", (socket) => {
              if (!socket.connecting) return
              connectTimer = setTimeout(
                () => finish({ ok: false, status: null, error: `connect timed out after ${connectTimeoutMs} ms` }),
                connectTimeoutMs
              )
              socket.once("connect", () => clearTimeout(connectTimer))
            })
            req.on("error", (e: Error) =>
              finish(status === null ? { ok: false, status: null, error: e.message || "connection failed" } : outcome())
            )
            req.end(request.body)
          },
          (e: unknown) => finish({ ok: false, status: null, error: `refused: ${String(e)}` })
        )
      }
      return Effect.sync(() => {
        finished = true
        clearTimeout(timer)
        clearTimeout(connectTimer)
        req?.destroy()
      })
    })

  return { check, send, timeoutMs }
}

/** The transport the application uses: https only in production; loopback by flag, and never in production. */
export const NodeWebhookTransport = Layer.effect(
  WebhookTransport,
  Effect.map(AppConfig, (config) =>
    makeNodeTransport({
      allowLoopback: config.webhooksAllowLoopback && !config.production,
      httpsOnly: config.production,
      timeoutMs: config.webhookTimeoutMs,
      connectTimeoutMs: config.webhookConnectTimeoutMs
    })
  )
)
