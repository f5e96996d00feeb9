// Reads the service's whole configuration from the environment once, validated at startup: an
// unknown or out-of-range value fails with one readable line naming its variable.
import { Config, Effect, Option, Redacted } from "effect"
import type { LogLevel } from "effect/LogLevel"
import { type AppConfigShape, configDefaults, type X402Config } from "../services/platform/AppConfig.js"

/** A configuration problem, reported as one readable line naming the variable. */
export class ConfigInvalid extends Error {
  override readonly name = "ConfigInvalid"
}

const invalid = (message: string) => new ConfigInvalid(`invalid configuration: ${message}`)

/** The raw text of a variable, trimmed; absent or blank is None. */
const text = (name: string) =>
  Config.String(name).pipe(
    Config.option,
    Effect.map(Option.map((s) => s.trim())),
    Effect.map(Option.filter((s) => s.length > 0)),
    Effect.mapError((e) => invalid(`${name}: ${e.message}`))
  )

const oneOf = <const A extends string>(name: string, values: ReadonlyArray<A>, fallback: A) =>
  Effect.flatMap(text(name), (raw) => {
    if (Option.isNone(raw)) return Effect.succeed(fallback)
    const v = raw.value.toLowerCase()
    return (values as ReadonlyArray<string>).includes(v)
      ? Effect.succeed(v as A)
      : Effect.fail(invalid(`${name}: must be one of ${values.join(" | ")}, got "${raw.value}"`))
  })

const intIn = (name: string, fallback: number, min: number, max: number) =>
  Effect.flatMap(text(name), (raw) => {
    if (Option.isNone(raw)) return Effect.succeed(fallback)
    const n = /^[+-]?\d+$/.test(raw.value) ? Number(raw.value) : Number.NaN
    return Number.isSafeInteger(n) && n >= min && n <= max
      ? Effect.succeed(n)
      : Effect.fail(invalid(`${name}: must be an integer from ${min} to ${max}, got "${raw.value}"`))
  })

/** LOG_LEVEL by any common spelling, case-insensitive: All, Trace, Debug, Info, Warning/Warn, Error, Fatal, None/Off. */
const LOG_LEVELS: Record<string, LogLevel> = {
  all: "All",
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  warning: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None",
  off: "None"
}
const logLevelNamed = (name: string) =>
  Effect.flatMap(text(name), (raw) => {
    if (Option.isNone(raw)) return Effect.succeed<LogLevel>("Info")
    const level = LOG_LEVELS[raw.value.toLowerCase()]
    return level
      ? Effect.succeed(level)
      : Effect.fail(
          invalid(`${name}: must be one of All, Trace, Debug, Info, Warning, Error, Fatal, None, got "${raw.value}"`)
        )
  })

const TRUE = new Set(["true", "1", "yes", "on"])
const FALSE = new Set(["false", "0", "no", "off"])
const bool = (name: string, fallback: boolean) =>
  Effect.flatMap(text(name), (raw) => {
    if (Option.isNone(raw)) return Effect.succeed(fallback)
    const v = raw.value.toLowerCase()
    return TRUE.has(v)
      ? Effect.succeed(true)
      : FALSE.has(v)
        ? Effect.succeed(false)
        : Effect.fail(invalid(`${name}: must be true or false, got "${raw.value}"`))
  })

const secret = (name: string) => Effect.map(text(name), Option.map(Redacted.make))

const raw = Effect.all({
  port: intIn("PORT", 3000, 0, 65535),
  baseUrl: text("BASE_URL"),
  storage: oneOf("STORAGE", ["embedded", "memory", "postgres"] as const, "embedded"),
  dataDir: Effect.map(
    text("DATA_DIR"),
    Option.getOrElse(() => "./data")
  ),
  databaseUrl: secret("DATABASE_URL"),
  payments: oneOf("PAYMENTS", ["fake", "stripe"] as const, "fake"),
  stripeSecretKey: secret("STRIPE_SECRET_KEY"),
  stripeWebhookSecret: secret("STRIPE_WEBHOOK_SECRET"),
  stripeApiBase: text("STRIPE_API_BASE"),
  mppChallengeSecret: secret("MPP_CHALLENGE_SECRET"),
  acpOrderWebhookUrl: text("ACP_ORDER_WEBHOOK_URL"),
  acpOrderWebhookSecret: secret("ACP_ORDER_WEBHOOK_SECRET"),
  logLevel: logLevelNamed("LOG_LEVEL"),
  logFormat: oneOf("LOG_FORMAT", ["pretty", "json"] as const, "pretty"),
  rateLimitPerMinute: intIn("RATE_LIMIT_PER_MINUTE", 60, 1, 1_000_000),
  rateLimitPerDay: intIn("RATE_LIMIT_PER_DAY", 1000, 1, 100_000_000),
  maxBodyBytes: intIn("MAX_BODY_BYTES", 1_048_576, 1024, 50 * 1_048_576),
  negotiationDelayMs: intIn("NEGOTIATION_DELAY_MS", 3_000, 0, 30_000),
  webhooksAllowLoopback: bool("WEBHOOKS_ALLOW_LOOPBACK", false),
  webhookTimeoutMs: intIn("WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
  webhookConnectTimeoutMs: intIn("WEBHOOK_CONNECT_TIMEOUT_MS", 1_000, 50, 30_000),
  orderWaitMs: intIn("ORDER_WAIT_MS", 10_000, 0, 60_000),
  production: bool("PRODUCTION", false),
  tokenName: Effect.map(
    text("TOKEN_NAME"),
    Option.getOrElse(() => configDefaults.tokenName)
  ),
  tokenSymbol: Effect.map(
    text("TOKEN_SYMBOL"),
    Option.getOrElse(() => configDefaults.tokenSymbol)
  ),
  workers: bool("WORKERS", true),
  founderAccountId: text("FOUNDER_ACCOUNT_ID"),
  platformStatsTtlSeconds: intIn("PLATFORM_STATS_TTL_SECONDS", 10, 0, 3600),
  fakeBillingPeriodSeconds: intIn("FAKE_BILLING_PERIOD_SECONDS", 30 * 24 * 3600, 1, 366 * 24 * 3600),
  anonymousWritesPerMinute: intIn("ANONYMOUS_WRITES_PER_MINUTE", 20, 1, 1_000_000),
  anonymousWritesPerDay: intIn("ANONYMOUS_WRITES_PER_DAY", 1000, 1, 100_000_000),
  embeddedVacuumSeconds: intIn("EMBEDDED_VACUUM_SECONDS", 60, 0, 86_400)
})

const X402_VARIABLES = [
  "X402_NETWORK",
  "X402_ASSET",
  "X402_PAY_TO",
  "X402_FACILITATOR_URL",
  "X402_ASSET_NAME",
  "X402_ASSET_VERSION"
] as const

/**
 * x402 (docs/x402.md): offered when X402_NETWORK, X402_ASSET, X402_PAY_TO and X402_FACILITATOR_URL
 * are set (the EIP-712 domain too); any of them without the others is a configuration error, so a
 * half-configured rail never starts. The facilitator must be https in production, and "simulated"
 * (the in-process simulation) is refused there.
 */
const x402Config = Effect.fnUntraced(function* (production: boolean) {
  const values = yield* Effect.all(X402_VARIABLES.map((name) => text(name)))
  const set = X402_VARIABLES.filter((_, i) => Option.isSome(values[i]!))
  if (set.length === 0) return Option.none<X402Config>()
  const missing = X402_VARIABLES.filter((_, i) => Option.isNone(values[i]!))
  if (missing.length > 0) {
    return yield* Effect.fail(
      invalid(`${missing.join(", ")} required with ${set.join(", ")} (x402 is configured as a whole)`)
    )
  }
  const [network, asset, payTo, facilitatorUrl, assetName, assetVersion] = values.map((v) => Option.getOrThrow(v!))
  const chain = /^eip155:([1-9]\d{0,15})$/.exec(network!)
  if (chain === null) return yield* Effect.fail(invalid(`X402_NETWORK: must be eip155:<chain id>, got "${network}"`))
  const address = /^0x[0-9a-fA-F]{40}$/
  if (!address.test(asset!)) return yield* Effect.fail(invalid(`X402_ASSET: must be a 0x address, got "${asset}"`))
  if (!address.test(payTo!)) return yield* Effect.fail(invalid(`X402_PAY_TO: must be a 0x address, got "${payTo}"`))
  let facilitator: X402Config["facilitator"]
  if (facilitatorUrl === "simulated") {
    if (production) {
      return yield* Effect.fail(
        invalid("X402_FACILITATOR_URL=simulated in production: the simulated chain moves no money; name a facilitator")
      )
    }
    facilitator = { _tag: "simulated" }
  } else {
    const url = URL.canParse(facilitatorUrl!) ? new URL(facilitatorUrl!) : undefined
    if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
      return yield* Effect.fail(
        invalid(`X402_FACILITATOR_URL: must be an http(s) address or "simulated", got "${facilitatorUrl}"`)
      )
    }
    if (production && url.protocol !== "https:") {
      return yield* Effect.fail(invalid(`X402_FACILITATOR_URL must be https in production, got "${facilitatorUrl}"`))
    }
    facilitator = { _tag: "http", url: facilitatorUrl!.replace(/\/+$/, "") }
  }
  const refundPrivateKey = yield* secret("X402_REFUND_PRIVATE_KEY")
  if (Option.isSome(refundPrivateKey) && !/^0x[0-9a-fA-F]{64}$/.test(Redacted.value(refundPrivateKey.value))) {
    return yield* Effect.fail(invalid("X402_REFUND_PRIVATE_KEY: must be a 0x-prefixed 32-byte hex key"))
  }
  const rpcUrl = yield* text("X402_RPC_URL")
  if (Option.isSome(rpcUrl) && !/^https?:\/\//.test(rpcUrl.value)) {
    return yield* Effect.fail(invalid(`X402_RPC_URL: must be an http(s) address, got "${rpcUrl.value}"`))
  }
  if (facilitator._tag === "http" && (Option.isNone(refundPrivateKey) || Option.isNone(rpcUrl))) {
    return yield* Effect.fail(
      invalid(
        "X402_REFUND_PRIVATE_KEY and X402_RPC_URL are required with a facilitator: failed orders are refunded on the chain"
      )
    )
  }
  return Option.some<X402Config>({
    network: network!,
    chainId: Number(chain[1]),
    asset: asset!,
    assetName: assetName!,
    assetVersion: assetVersion!,
    assetDecimals: yield* intIn("X402_ASSET_DECIMALS", 6, 2, 36),
    payTo: payTo!,
    facilitator,
    refundPrivateKey,
    rpcUrl,
    maxTimeoutSeconds: yield* intIn("X402_MAX_TIMEOUT_SECONDS", 300, 10, 86_400),
    facilitatorTimeoutMs: yield* intIn("X402_FACILITATOR_TIMEOUT_MS", 10_000, 100, 120_000),
    refundBumpAfterMs: yield* intIn("X402_REFUND_BUMP_AFTER_MS", 120_000, 0, 86_400_000)
  })
})

export const loadConfig: Effect.Effect<AppConfigShape, ConfigInvalid> = Effect.gen(function* () {
  const c = yield* raw
  const fakePaymentsInProduction = yield* bool("FAKE_PAYMENTS_IN_PRODUCTION", false)
  // One production switch, whichever way the operator says it: everything production-sensitive
  // (https-only webhooks, Secure cookies, no fake payments) reads `production`, never the variables.
  const saidBy = [
    ...(c.production ? ["PRODUCTION=true"] : []),
    ...(Option.getOrUndefined(yield* text("NODE_ENV"))?.toLowerCase() === "production" ? ["NODE_ENV=production"] : [])
  ]
  const production = saidBy.length > 0
  if (c.payments === "fake" && production && !fakePaymentsInProduction) {
    return yield* Effect.fail(
      invalid(
        `PAYMENTS=fake with ${saidBy.join(" and ")}: the fake processor grants credits without payment; set PAYMENTS=stripe, or FAKE_PAYMENTS_IN_PRODUCTION=true to run the simulation anyway`
      )
    )
  }
  if (c.storage === "postgres" && Option.isNone(c.databaseUrl)) {
    return yield* Effect.fail(invalid("DATABASE_URL is required when STORAGE=postgres"))
  }
  if (c.payments === "stripe" && Option.isNone(c.stripeSecretKey)) {
    return yield* Effect.fail(invalid("STRIPE_SECRET_KEY is required when PAYMENTS=stripe"))
  }
  if (c.payments === "stripe" && Option.isNone(c.stripeWebhookSecret)) {
    return yield* Effect.fail(invalid("STRIPE_WEBHOOK_SECRET is required when PAYMENTS=stripe"))
  }
  const baseUrl = Option.getOrElse(c.baseUrl, () => `http://localhost:${c.port}`).replace(/\/+$/, "")
  if (!/^https?:\/\/[^\s/]+/.test(baseUrl)) {
    return yield* Effect.fail(invalid(`BASE_URL must be an absolute http(s) address, got "${baseUrl}"`))
  }
  if (Option.isSome(c.acpOrderWebhookUrl) !== Option.isSome(c.acpOrderWebhookSecret)) {
    return yield* Effect.fail(
      invalid("ACP_ORDER_WEBHOOK_URL and ACP_ORDER_WEBHOOK_SECRET go together: set both, or neither")
    )
  }
  if (Option.isSome(c.acpOrderWebhookUrl)) {
    const url = c.acpOrderWebhookUrl.value
    if (!/^https?:\/\/[^\s/]+/.test(url))
      return yield* Effect.fail(invalid(`ACP_ORDER_WEBHOOK_URL must be an absolute http(s) address, got "${url}"`))
    if (production && !url.startsWith("https://"))
      return yield* Effect.fail(invalid(`ACP_ORDER_WEBHOOK_URL must be https in production, got "${url}"`))
  }
  const x402 = yield* x402Config(production)
  return { ...c, baseUrl, production, fakePaymentsInProduction, x402 } satisfies AppConfigShape
})
