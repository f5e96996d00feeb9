// Startup configuration: defaults, every variable's validation, and the one readable line (exit 78)
// a bad value stops the server with.
import { it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Result } from "effect"
import { spawnSync } from "node:child_process"
import { createServer, type AddressInfo } from "node:net"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it as vit } from "vitest"
import { loadConfig } from "../src/layers/config.js"
import { startServer } from "./fixtures/server.js"
import { startNodeFlags } from "../scripts/serverBuild.mjs"
import { buildServer } from "./scale/harness.js"

const load = (env: Record<string, string>) =>
  loadConfig.pipe(
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)),
    Effect.result
  )

const failure = (env: Record<string, string>) =>
  Effect.map(load(env), (r) =>
    Result.isFailure(r) ? r.failure.message : `accepted: ${JSON.stringify(Result.getOrThrow(r))}`
  )

describe("configuration", () => {
  it.effect(
    "defaults: port 3000, embedded storage in ./data, fake payments, Info logs, 60/min and 1000/day, anonymous writes 20/min and 1000/day, 30-day fake billing period",
    () =>
      Effect.gen(function* () {
        const c = Result.getOrThrow(yield* load({}))
        expect(c).toMatchObject({
          port: 3000,
          baseUrl: "http://localhost:3000",
          storage: "embedded",
          dataDir: "./data",
          payments: "fake",
          logFormat: "pretty",
          rateLimitPerMinute: 60,
          rateLimitPerDay: 1000,
          anonymousWritesPerMinute: 20,
          anonymousWritesPerDay: 1000,
          fakeBillingPeriodSeconds: 2_592_000,
          platformStatsTtlSeconds: 10
        })
        expect(c.logLevel).toBe("Info")
      })
  )

  it.effect("LOG_LEVEL takes the spellings the README lists, in any case; anything else names the variable", () =>
    Effect.gen(function* () {
      for (const [raw, level] of [
        ["Warning", "Warn"],
        ["WARN", "Warn"],
        ["debug", "Debug"],
        ["None", "None"],
        ["All", "All"],
        ["Error", "Error"]
      ] as const) {
        expect(Result.getOrThrow(yield* load({ LOG_LEVEL: raw })).logLevel).toBe(level)
      }
      expect(yield* failure({ LOG_LEVEL: "loud" })).toMatch(
        /^invalid configuration: LOG_LEVEL: must be one of .*got "loud"$/
      )
    })
  )

  it.effect("bad combinations and values are one line naming the variable", () =>
    Effect.gen(function* () {
      expect(yield* failure({ STORAGE: "postgres" })).toBe(
        "invalid configuration: DATABASE_URL is required when STORAGE=postgres"
      )
      expect(yield* failure({ PAYMENTS: "stripe" })).toBe(
        "invalid configuration: STRIPE_SECRET_KEY is required when PAYMENTS=stripe"
      )
      expect(yield* failure({ PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x" })).toBe(
        "invalid configuration: STRIPE_WEBHOOK_SECRET is required when PAYMENTS=stripe"
      )
      expect(yield* failure({ PORT: "abc" })).toMatch(/^invalid configuration: PORT: /)
      expect(yield* failure({ PORT: "70000" })).toMatch(
        /^invalid configuration: PORT: must be an integer from 0 to 65535/
      )
      expect(yield* failure({ STORAGE: "mongo" })).toMatch(
        /^invalid configuration: STORAGE: must be one of embedded \| memory \| postgres, got "mongo"$/
      )
      expect(yield* failure({ RATE_LIMIT_PER_MINUTE: "0" })).toMatch(/^invalid configuration: RATE_LIMIT_PER_MINUTE: /)
      expect(yield* failure({ BASE_URL: "example.com" })).toMatch(
        /^invalid configuration: BASE_URL must be an absolute http\(s\) address/
      )
      // ACP order events: a receiver and its secret go together; an http(s) address, https in production.
      expect(yield* failure({ ACP_ORDER_WEBHOOK_URL: "https://platform.example/order_events" })).toBe(
        "invalid configuration: ACP_ORDER_WEBHOOK_URL and ACP_ORDER_WEBHOOK_SECRET go together: set both, or neither"
      )
      expect(yield* failure({ ACP_ORDER_WEBHOOK_SECRET: "s" })).toMatch(/go together/)
      expect(yield* failure({ ACP_ORDER_WEBHOOK_URL: "platform.example", ACP_ORDER_WEBHOOK_SECRET: "s" })).toMatch(
        /^invalid configuration: ACP_ORDER_WEBHOOK_URL must be an absolute http\(s\) address/
      )
      const acp = Result.getOrThrow(
        yield* load({ ACP_ORDER_WEBHOOK_URL: "https://platform.example/order_events", ACP_ORDER_WEBHOOK_SECRET: "s" })
      )
      expect(Option.getOrNull(acp.acpOrderWebhookUrl)).toBe("https://platform.example/order_events")
    })
  )

  // One production switch: PRODUCTION=true or NODE_ENV=production turns it on, and everything that
  // depends on it (https-only webhooks, Secure cookies, no fake payments) follows that one flag.
  const STRIPE = { PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" }
  const cases: ReadonlyArray<{ readonly env: Record<string, string>; readonly production: boolean | string }> = [
    { env: {}, production: false },
    { env: { NODE_ENV: "development" }, production: false },
    { env: { PRODUCTION: "false" }, production: false },
    { env: { FAKE_PAYMENTS_IN_PRODUCTION: "true" }, production: false },
    // Fake payments grant credits for free: refused in production, whichever variable said so…
    { env: { PRODUCTION: "true" }, production: "PAYMENTS=fake with PRODUCTION=true" },
    { env: { NODE_ENV: "production" }, production: "PAYMENTS=fake with NODE_ENV=production" },
    { env: { NODE_ENV: "Production" }, production: "PAYMENTS=fake with NODE_ENV=production" },
    {
      env: { PRODUCTION: "true", NODE_ENV: "production" },
      production: "PAYMENTS=fake with PRODUCTION=true and NODE_ENV=production"
    },
    // …PRODUCTION=false does not switch NODE_ENV=production off…
    { env: { PRODUCTION: "false", NODE_ENV: "production" }, production: "PAYMENTS=fake with NODE_ENV=production" },
    // …unless the operator says yes in so many words.
    { env: { PRODUCTION: "true", FAKE_PAYMENTS_IN_PRODUCTION: "true" }, production: true },
    { env: { NODE_ENV: "production", FAKE_PAYMENTS_IN_PRODUCTION: "true" }, production: true },
    {
      env: { PRODUCTION: "true", FAKE_PAYMENTS_IN_PRODUCTION: "false" },
      production: "PAYMENTS=fake with PRODUCTION=true"
    },
    { env: { PRODUCTION: "true", ...STRIPE }, production: true },
    { env: { NODE_ENV: "production", ...STRIPE }, production: true },
    { env: { NODE_ENV: "development", ...STRIPE }, production: false }
  ]
  for (const { env, production } of cases) {
    it.effect(
      `${JSON.stringify(env)} → ${typeof production === "string" ? "refused" : `production ${production}`}`,
      () =>
        Effect.gen(function* () {
          const r = yield* load(env)
          if (typeof production === "string") {
            expect(Result.isFailure(r) ? r.failure.message : "accepted").toBe(
              `invalid configuration: ${production}: the fake processor grants credits without payment; set PAYMENTS=stripe, or FAKE_PAYMENTS_IN_PRODUCTION=true to run the simulation anyway`
            )
          } else {
            const c = Result.getOrThrow(r)
            expect(c.production).toBe(production)
            expect(c.fakePaymentsInProduction).toBe(env.FAKE_PAYMENTS_IN_PRODUCTION === "true")
          }
        })
    )
  }
})

describe("the fake processor in production", () => {
  vit(
    "a configuration built in code with production on is refused by the fake processor itself",
    async () => {
      await expect(startServer({ config: { production: true } })).rejects.toThrow(/PAYMENTS=fake in production/)
      const server = await startServer({ config: { production: true, fakePaymentsInProduction: true } })
      await server.close()
    },
    60_000
  )
})

describe("startup with a bad configuration", () => {
  // The server as `npm start` runs it (the bundle and its node flags), built once per test process:
  // `tsx src/main.ts` cost ~2 s more CPU per start. A stack frame would name the bundle (.mjs).
  let bundle = ""
  beforeAll(async () => {
    bundle = await buildServer()
  }, 60_000)

  vit(
    "prints one line naming the variable (no stack trace) and exits 78",
    () => {
      const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
      const r = spawnSync(process.execPath, [...startNodeFlags(), bundle], {
        cwd: root,
        env: { ...process.env, PORT: "not-a-port", STORAGE: "memory", DATABASE_URL: "" },
        encoding: "utf8",
        timeout: 60_000
      })
      expect(r.status).toBe(78)
      const lines = r.stderr
        .split("\n")
        .filter((l) => l.trim() !== "" && !l.includes("ExperimentalWarning") && !l.includes("--trace-warnings"))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^invalid configuration: PORT: /)
      expect(r.stderr).not.toMatch(/\bat .*\.(ts|m?js):\d+/)
    },
    60_000
  )

  const startWith = (env: Record<string, string>) => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
    const r = spawnSync(process.execPath, [...startNodeFlags(), bundle], {
      cwd: root,
      // vitest sets BASE_URL=/ (Vite's base path) in its own environment: blank it for the child.
      env: { ...process.env, BASE_URL: "", LOG_LEVEL: "Warning", ...env },
      encoding: "utf8",
      timeout: 60_000
    })
    const lines = r.stderr
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.includes("ExperimentalWarning") && !l.includes("--trace-warnings"))
    return { status: r.status, lines, stderr: r.stderr, stdout: r.stdout }
  }

  vit(
    "PRODUCTION=true with the fake processor: one line, exit 78, never 'listening'",
    () => {
      const r = startWith({
        PORT: "0",
        STORAGE: "memory",
        PRODUCTION: "true",
        NODE_ENV: "",
        PAYMENTS: "fake",
        FAKE_PAYMENTS_IN_PRODUCTION: ""
      })
      expect(r.status, r.lines.join("\n")).toBe(78)
      expect(r.lines).toHaveLength(1)
      expect(r.lines[0]).toMatch(
        /^invalid configuration: PAYMENTS=fake with PRODUCTION=true: the fake processor grants credits without payment/
      )
      expect(r.stdout).not.toContain("listening")
    },
    60_000
  )

  vit(
    "a port in use: one line naming PORT, exit 69, never 'listening'",
    async () => {
      const blocker = createServer()
      await new Promise<void>((resolve) => blocker.listen(0, resolve))
      const port = (blocker.address() as AddressInfo).port
      try {
        const r = startWith({ PORT: String(port), STORAGE: "memory" })
        expect(r.status, r.lines.join("\n")).toBe(69)
        expect(r.lines).toEqual([
          `cannot listen on port ${port}: the address is already in use (check PORT, or stop the other server)`
        ])
        expect(r.stdout).not.toContain("listening")
      } finally {
        blocker.close()
      }
    },
    60_000
  )

  vit(
    "an unreachable database: one line naming DATABASE_URL (no password, no stack trace), exit 69",
    () => {
      const r = startWith({
        PORT: "0",
        STORAGE: "postgres",
        DATABASE_URL: "postgres://someone:hunter2@127.0.0.1:1/nodb"
      })
      expect(r.status, r.lines.join("\n")).toBe(69)
      expect(r.lines).toHaveLength(1)
      expect(r.lines[0]).toMatch(/^cannot use 127\.0\.0\.1:1\/nodb: .*ECONNREFUSED.*\(check DATABASE_URL/)
      expect(r.stderr).not.toContain("hunter2")
      expect(r.stderr).not.toMatch(/\bat .*\.(ts|m?js):\d+/)
    },
    60_000
  )
})
