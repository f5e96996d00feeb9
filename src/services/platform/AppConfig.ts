// The service's configuration as the services see it: a plain value behind the AppConfig tag.
// Where it comes from (environment variables, validated at startup) is src/layers/config.ts.
import { Context, Layer, Option, type Redacted } from "effect"
import type { LogLevel } from "effect/LogLevel"

export type StorageKind = "embedded" | "memory" | "postgres"
export type PaymentsKind = "fake" | "stripe"

/**
 * x402 on the paid call (docs/x402.md), offered only when configured: the network and asset it is
 * paid in, the asset's EIP-712 domain (name, version) and decimals, where the money goes (payTo),
 * the facilitator that verifies and settles (an https URL in production; "simulated": the honest
 * in-process simulation, never in production), and the chain access refunds need.
 */
export interface X402Config {
  /** CAIP-2, `eip155:<chain id>`. */
  readonly network: string
  readonly chainId: number
  /** The EIP-3009 token's address. */
  readonly asset: string
  readonly assetName: string
  readonly assetVersion: string
  readonly assetDecimals: number
  readonly payTo: string
  readonly facilitator: { readonly _tag: "http"; readonly url: string } | { readonly _tag: "simulated" }
  /** The operator's refund wallet (its private key) and the RPC it sends refunds through; none: simulated chain. */
  readonly refundPrivateKey: Option.Option<Redacted.Redacted>
  readonly rpcUrl: Option.Option<string>
  /** How long an authorization may stay valid (accepts[].maxTimeoutSeconds). */
  readonly maxTimeoutSeconds: number
  /** How long the facilitator has to answer /verify and /settle. */
  readonly facilitatorTimeoutMs: number
  /** How long a refund may wait unmined before it is replaced at its nonce with a higher fee. */
  readonly refundBumpAfterMs: number
}

export interface AppConfigShape {
  readonly port: number
  readonly baseUrl: string
  readonly storage: StorageKind
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** The embedded store's data folder (STORAGE=embedded); "memory://" keeps it in memory (tests). */
  readonly dataDir: string
  readonly payments: PaymentsKind
  readonly stripeSecretKey: Option.Option<Redacted.Redacted>
  readonly stripeWebhookSecret: Option.Option<Redacted.Redacted>
  readonly stripeApiBase: Option.Option<string>
  /**
   * ACP order events (docs/acp.md "Order events"): the agent platform's receiver
   * (ACP_ORDER_WEBHOOK_URL) and the HMAC secret shared with it (ACP_ORDER_WEBHOOK_SECRET); none: not sent.
   */
  readonly acpOrderWebhookUrl: Option.Option<string>
  readonly acpOrderWebhookSecret: Option.Option<Redacted.Redacted>
  /** HMAC key of MPP challenge ids (MPP_CHALLENGE_SECRET); none: random per process. */
  readonly mppChallengeSecret: Option.Option<Redacted.Redacted>
  readonly logLevel: LogLevel
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
  /** Per webhook attempt: the response timeout and, within it, the connect timeout (ms; docs/webhooks.md). */
  readonly webhookTimeoutMs: number
  readonly webhookConnectTimeoutMs: number
  /** How long POST /buy of a push service waits for the seller's answer before answering pending (ms). */
  readonly orderWaitMs: number
  /**
   * Production (PRODUCTION=true or NODE_ENV=production, either one): https-only webhooks, Secure
   * cookies, and no fake payments unless fakePaymentsInProduction.
   */
  readonly production: boolean
  /** The operator's explicit yes (FAKE_PAYMENTS_IN_PRODUCTION=true) to the fake processor in production. */
  readonly fakePaymentsInProduction: boolean
  /** Platform utility token name and symbol. */
  readonly tokenName: string
  readonly tokenSymbol: string
  /** Run background workers (negotiation answers, sagas, webhooks, builds) in this process. */
  readonly workers: boolean
  /** The fake processor's billing period: a subscription renews at most once per period. */
  readonly fakeBillingPeriodSeconds: number
  /** Anonymous writes (sign-up, knowledge checkouts, session-started checkouts) per client address. */
  readonly anonymousWritesPerMinute: number
  readonly anonymousWritesPerDay: number
  /** How long platform-wide figures (/stats' platform half, the leaderboard) are reused per process; 0: never. */
  readonly platformStatsTtlSeconds: number
  /** The founder's account id: the only account that may veto a passed governance proposal. */
  readonly founderAccountId: Option.Option<string>
  /** Seconds between the embedded store's vacuum passes (PGlite has no autovacuum); 0: none. */
  readonly embeddedVacuumSeconds: number
  /** x402 on the paid call; none: not offered. */
  readonly x402: Option.Option<X402Config>
}

/** Defaults every loader starts from; also the test configuration. */
export const configDefaults: AppConfigShape = {
  port: 0,
  baseUrl: "http://localhost:3000",
  storage: "memory",
  databaseUrl: Option.none(),
  dataDir: "memory://",
  payments: "fake",
  stripeSecretKey: Option.none(),
  stripeWebhookSecret: Option.none(),
  stripeApiBase: Option.none(),
  mppChallengeSecret: Option.none(),
  acpOrderWebhookUrl: Option.none(),
  acpOrderWebhookSecret: Option.none(),
  logLevel: "Warn",
  logFormat: "pretty",
  rateLimitPerMinute: 60,
  rateLimitPerDay: 1000,
  maxBodyBytes: 1_048_576,
  negotiationDelayMs: 3_000,
  webhooksAllowLoopback: true,
  webhookTimeoutMs: 10_000,
  webhookConnectTimeoutMs: 1_000,
  orderWaitMs: 10_000,
  production: false,
  fakePaymentsInProduction: false,
  tokenName: "Agent Commerce Utility Token",
  tokenSymbol: "ACT",
  workers: true,
  founderAccountId: Option.none(),
  // Tests read platform figures right after writing them; the environment's default is 10 (src/layers/config.ts).
  platformStatsTtlSeconds: 0,
  fakeBillingPeriodSeconds: 30 * 24 * 3600,
  anonymousWritesPerMinute: 20,
  anonymousWritesPerDay: 1000,
  // Off in tests (a TestClock moved by days would run a pass per interval); the environment's default is 60.
  embeddedVacuumSeconds: 0,
  x402: Option.none()
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("agent-commerce/AppConfig") {
  /** A config for tests: in memory, fake payments, everything else default unless overridden. */
  static readonly test = (overrides: Partial<AppConfigShape> = {}): Layer.Layer<AppConfig> =>
    Layer.succeed(AppConfig, { ...configDefaults, ...overrides })
}
