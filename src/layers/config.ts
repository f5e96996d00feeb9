// The service's whole configuration, read once through effect Config and validated at startup.
import { Config, ConfigError, Context, Effect, Either, Layer, LogLevel, Option, Redacted } from "effect"

export type StorageKind = "memory" | "postgres"
export type PaymentsKind = "fake" | "stripe"

export interface AppConfigShape {
  readonly port: number
  readonly baseUrl: string
  readonly storage: StorageKind
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly payments: PaymentsKind
  readonly stripeSecretKey: Option.Option<Redacted.Redacted>
  readonly stripeWebhookSecret: Option.Option<Redacted.Redacted>
  readonly stripeApiBase: Option.Option<string>
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "pretty" | "json"
  /** Requests per key per minute / per day on the agent API and commerce protocol (spec §8). */
  readonly rateLimitPerMinute: number
  readonly rateLimitPerDay: number
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number
  /** Seller auto-answer delay for negotiations, in milliseconds (never over 30 000, spec §4.4 rule 2). */
  readonly negotiationDelayMs: number
  /** Outgoing webhooks may target loopback addresses (development and tests only). */
  readonly webhooksAllowLoopback: boolean
  /** Production mode: https-only webhooks, Secure cookies. */
  readonly production: boolean
  /** Platform utility token name and symbol. */
  readonly tokenName: string
  readonly tokenSymbol: string
  /** Run background workers (negotiation answers, sagas, webhooks, builds) in this process. */
  readonly workers: boolean
  /** The founder's account id: the only account that may veto a passed governance proposal. */
  readonly founderAccountId: Option.Option<string>
}

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  /** A config for tests: in memory, fake payments, everything else default unless overridden. */
  static readonly test = (overrides: Partial<AppConfigShape> = {}): Layer.Layer<AppConfig> =>
    Layer.succeed(AppConfig, { ...testDefaults, ...overrides })
}

const testDefaults: AppConfigShape = {
  port: 0,
  baseUrl: "http://localhost:3000",
  storage: "memory",
  databaseUrl: Option.none(),
  payments: "fake",
  stripeSecretKey: Option.none(),
  stripeWebhookSecret: Option.none(),
  stripeApiBase: Option.none(),
  logLevel: LogLevel.Warning,
  logFormat: "pretty",
  rateLimitPerMinute: 60,
  rateLimitPerDay: 1000,
  maxBodyBytes: 1_048_576,
  negotiationDelayMs: 3_000,
  webhooksAllowLoopback: true,
  production: false,
  tokenName: "Agent Commerce Utility Token",
  tokenSymbol: "ACT",
  workers: true,
  founderAccountId: Option.none()
}

const oneOf = <const A extends string>(name: string, values: ReadonlyArray<A>, fallback: A) =>
  Config.string(name).pipe(
    Config.withDefault(fallback as string),
    Config.mapOrFail((raw) => {
      const v = raw.trim().toLowerCase()
      return (values as ReadonlyArray<string>).includes(v)
        ? Either.right(v as A)
        : Either.left(ConfigError.InvalidData([name], `must be one of ${values.join(" | ")}, got "${raw}"`))
    })
  )

const intIn = (name: string, fallback: number, min: number, max: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((n) =>
      n >= min && n <= max ? Either.right(n) : Either.left(ConfigError.InvalidData([name], `must be an integer from ${min} to ${max}, got ${n}`))
    )
  )

/** LOG_LEVEL by any common spelling, case-insensitive: All, Trace, Debug, Info, Warning/Warn, Error, Fatal, None/Off. */
const LOG_LEVELS: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None,
  off: LogLevel.None
}
const logLevelNamed = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault("info"),
    Config.mapOrFail((raw) => {
      const level = LOG_LEVELS[raw.trim().toLowerCase()]
      return level
        ? Either.right(level)
        : Either.left(ConfigError.InvalidData([name], `must be one of All, Trace, Debug, Info, Warning, Error, Fatal, None, got "${raw}"`))
    })
  )

const bool = (name: string, fallback: boolean) => Config.boolean(name).pipe(Config.withDefault(fallback))

const raw = Config.all({
  port: intIn("PORT", 3000, 0, 65535),
  baseUrl: Config.string("BASE_URL").pipe(Config.option),
  storage: oneOf("STORAGE", ["memory", "postgres"] as const, "memory"),
  databaseUrl: Config.redacted("DATABASE_URL").pipe(Config.option),
  payments: oneOf("PAYMENTS", ["fake", "stripe"] as const, "fake"),
  stripeSecretKey: Config.redacted("STRIPE_SECRET_KEY").pipe(Config.option),
  stripeWebhookSecret: Config.redacted("STRIPE_WEBHOOK_SECRET").pipe(Config.option),
  stripeApiBase: Config.string("STRIPE_API_BASE").pipe(Config.option),
  logLevel: logLevelNamed("LOG_LEVEL"),
  logFormat: oneOf("LOG_FORMAT", ["pretty", "json"] as const, "pretty"),
  rateLimitPerMinute: intIn("RATE_LIMIT_PER_MINUTE", 60, 1, 1_000_000),
  rateLimitPerDay: intIn("RATE_LIMIT_PER_DAY", 1000, 1, 100_000_000),
  maxBodyBytes: intIn("MAX_BODY_BYTES", 1_048_576, 1024, 50 * 1_048_576),
  negotiationDelayMs: intIn("NEGOTIATION_DELAY_MS", 3_000, 0, 30_000),
  webhooksAllowLoopback: bool("WEBHOOKS_ALLOW_LOOPBACK", false),
  production: bool("PRODUCTION", false),
  tokenName: Config.string("TOKEN_NAME").pipe(Config.withDefault(testDefaults.tokenName)),
  tokenSymbol: Config.string("TOKEN_SYMBOL").pipe(Config.withDefault(testDefaults.tokenSymbol)),
  workers: bool("WORKERS", true),
  founderAccountId: Config.string("FOUNDER_ACCOUNT_ID").pipe(Config.option)
})

/** A configuration problem, reported as one readable line naming the variable. */
export class ConfigInvalid extends Error {
  override readonly name = "ConfigInvalid"
}

const describe = (error: ConfigError.ConfigError): string =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, l, r) => [l, r].filter(Boolean).join("; "),
    orCase: (_, l, r) => [l, r].filter(Boolean).join("; "),
    invalidDataCase: (_, path, message) => `${path.join(".")}: ${message}`,
    missingDataCase: (_, path, message) => `${path.join(".")}: ${message}`,
    sourceUnavailableCase: (_, path, message) => `${path.join(".")}: ${message}`,
    unsupportedCase: (_, path, message) => `${path.join(".")}: ${message}`
  })

export const loadConfig: Effect.Effect<AppConfigShape, ConfigInvalid> = Effect.gen(function* () {
  const c = yield* raw.pipe(Effect.mapError((e) => new ConfigInvalid(`invalid configuration: ${describe(e)}`)))
  if (c.storage === "postgres" && Option.isNone(c.databaseUrl)) {
    return yield* Effect.fail(new ConfigInvalid("invalid configuration: DATABASE_URL is required when STORAGE=postgres"))
  }
  if (c.payments === "stripe" && Option.isNone(c.stripeSecretKey)) {
    return yield* Effect.fail(new ConfigInvalid("invalid configuration: STRIPE_SECRET_KEY is required when PAYMENTS=stripe"))
  }
  if (c.payments === "stripe" && Option.isNone(c.stripeWebhookSecret)) {
    return yield* Effect.fail(new ConfigInvalid("invalid configuration: STRIPE_WEBHOOK_SECRET is required when PAYMENTS=stripe"))
  }
  const baseUrl = Option.getOrElse(c.baseUrl, () => `http://localhost:${c.port}`).replace(/\/+$/, "")
  if (!/^https?:\/\/[^\s/]+/.test(baseUrl)) {
    return yield* Effect.fail(new ConfigInvalid(`invalid configuration: BASE_URL must be an absolute http(s) address, got "${baseUrl}"`))
  }
  return { ...c, baseUrl } satisfies AppConfigShape
})

export const AppConfigLive: Layer.Layer<AppConfig, ConfigInvalid> = Layer.effect(AppConfig, loadConfig)
