// Startup configuration: defaults, every variable's validation, and the one readable line (exit 78)
// a bad value stops the server with.
import { it } from "@effect/vitest"
import { ConfigProvider, Effect, Result } from "effect"
import { spawnSync } from "node:child_process"
import { createServer, type AddressInfo } from "node:net"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it as vit } from "vitest"
import { loadConfig } from "../src/layers/config.js"

const load = (env: Record<string, string>) =>
  loadConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)), Effect.result)

const failure = (env: Record<string, string>) =>
  Effect.map(load(env), (r) => (Result.isFailure(r) ? r.failure.message : `accepted: ${JSON.stringify(Result.getOrThrow(r))}`))

describe("configuration", () => {
  it.effect("defaults: port 3000, embedded storage in ./data, fake payments, Info logs, 60/min and 1000/day, anonymous writes 20/min and 1000/day, 30-day fake billing period", () =>
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
      for (const [raw, level] of [["Warning", "Warn"], ["WARN", "Warn"], ["debug", "Debug"], ["None", "None"], ["All", "All"], ["Error", "Error"]] as const) {
        expect(Result.getOrThrow(yield* load({ LOG_LEVEL: raw })).logLevel).toBe(level)
      }
      expect(yield* failure({ LOG_LEVEL: "loud" })).toMatch(/^invalid configuration: LOG_LEVEL: must be one of .*got "loud"$/)
    })
  )

  it.effect("bad combinations and values are one line naming the variable", () =>
    Effect.gen(function* () {
      expect(yield* failure({ STORAGE: "postgres" })).toBe("invalid configuration: DATABASE_URL is required when STORAGE=postgres")
      expect(yield* failure({ PAYMENTS: "stripe" })).toBe("invalid configuration: STRIPE_SECRET_KEY is required when PAYMENTS=stripe")
      expect(yield* failure({ PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x" })).toBe("invalid configuration: STRIPE_WEBHOOK_SECRET is required when PAYMENTS=stripe")
      expect(yield* failure({ PORT: "abc" })).toMatch(/^invalid configuration: PORT: /)
      expect(yield* failure({ PORT: "70000" })).toMatch(/^invalid configuration: PORT: must be an integer from 0 to 65535/)
      expect(yield* failure({ STORAGE: "mongo" })).toMatch(/^invalid configuration: STORAGE: must be one of embedded \| memory \| postgres, got "mongo"$/)
      expect(yield* failure({ RATE_LIMIT_PER_MINUTE: "0" })).toMatch(/^invalid configuration: RATE_LIMIT_PER_MINUTE: /)
      expect(yield* failure({ BASE_URL: "example.com" })).toMatch(/^invalid configuration: BASE_URL must be an absolute http\(s\) address/)
      // Fake payments grant credits for free: not in production unless the operator says so.
      expect(yield* failure({ NODE_ENV: "production" })).toMatch(/^invalid configuration: PAYMENTS=fake with NODE_ENV=production: .*FAKE_PAYMENTS_IN_PRODUCTION=true/)
      expect(yield* failure({ NODE_ENV: "production", FAKE_PAYMENTS_IN_PRODUCTION: "true" })).toMatch(/^accepted/)
      expect(yield* failure({ NODE_ENV: "production", PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" })).toMatch(/^accepted/)
    })
  )
})

describe("startup with a bad configuration", () => {
  vit("prints one line naming the variable (no stack trace) and exits 78", () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
    const r = spawnSync(process.execPath, ["--import", "tsx", path.join(root, "src/main.ts")], {
      cwd: root,
      env: { ...process.env, PORT: "not-a-port", STORAGE: "memory", DATABASE_URL: "" },
      encoding: "utf8",
      timeout: 60_000
    })
    expect(r.status).toBe(78)
    const lines = r.stderr.split("\n").filter((l) => l.trim() !== "" && !l.includes("ExperimentalWarning") && !l.includes("--trace-warnings"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^invalid configuration: PORT: /)
    expect(r.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/)
  }, 60_000)

  const startWith = (env: Record<string, string>) => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
    const r = spawnSync(process.execPath, ["--import", "tsx", path.join(root, "src/main.ts")], {
      cwd: root,
      // vitest sets BASE_URL=/ (Vite's base path) in its own environment: blank it for the child.
      env: { ...process.env, BASE_URL: "", LOG_LEVEL: "Warning", ...env },
      encoding: "utf8",
      timeout: 60_000
    })
    const lines = r.stderr.split("\n").filter((l) => l.trim() !== "" && !l.includes("ExperimentalWarning") && !l.includes("--trace-warnings"))
    return { status: r.status, lines, stderr: r.stderr, stdout: r.stdout }
  }

  vit("a port in use: one line naming PORT, exit 69, never 'listening'", async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, resolve))
    const port = (blocker.address() as AddressInfo).port
    try {
      const r = startWith({ PORT: String(port), STORAGE: "memory" })
      expect(r.status, r.lines.join("\n")).toBe(69)
      expect(r.lines).toEqual([`cannot listen on port ${port}: the address is already in use (check PORT, or stop the other server)`])
      expect(r.stdout).not.toContain("listening")
    } finally {
      blocker.close()
    }
  }, 60_000)

  vit("an unreachable database: one line naming DATABASE_URL (no password, no stack trace), exit 69", () => {
    const r = startWith({ PORT: "0", STORAGE: "postgres", DATABASE_URL: "postgres://someone:hunter2@127.0.0.1:1/nodb" })
    expect(r.status, r.lines.join("\n")).toBe(69)
    expect(r.lines).toHaveLength(1)
    expect(r.lines[0]).toMatch(/^cannot use 127\.0\.0\.1:1\/nodb: .*ECONNREFUSED.*\(check DATABASE_URL/)
    expect(r.stderr).not.toContain("hunter2")
    expect(r.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/)
  }, 60_000)
})
