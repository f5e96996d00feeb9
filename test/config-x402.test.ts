// x402's configuration (docs/x402.md, README): offered only when configured as a whole; every
// value checked with one readable line naming its variable; the facilitator https in production
// and the simulated one refused there; a real facilitator needs the refund wallet and its RPC.
import { it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Result } from "effect"
import { describe, expect } from "vitest"
import { loadConfig } from "../src/layers/config.js"

const load = (env: Record<string, string>) =>
  loadConfig.pipe(
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)),
    Effect.result
  )
const refusal = (env: Record<string, string>) =>
  Effect.map(load(env), (r) => (Result.isFailure(r) ? r.failure.message : "accepted"))

const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
const SIMULATED = {
  X402_NETWORK: "eip155:84532",
  X402_ASSET: ASSET,
  X402_ASSET_NAME: "USDC",
  X402_ASSET_VERSION: "2",
  X402_PAY_TO: PAY_TO,
  X402_FACILITATOR_URL: "simulated"
}
const REAL = {
  ...SIMULATED,
  X402_FACILITATOR_URL: "https://facilitator.example/",
  X402_REFUND_PRIVATE_KEY: `0x${"11".repeat(32)}`,
  X402_RPC_URL: "http://127.0.0.1:8545"
}
const PRODUCTION = {
  PRODUCTION: "true",
  PAYMENTS: "stripe",
  STRIPE_SECRET_KEY: "sk_test_x",
  STRIPE_WEBHOOK_SECRET: "whsec_x"
}

describe("x402 configuration", () => {
  it.effect("not configured: not offered", () =>
    Effect.gen(function* () {
      expect(Option.isNone(Result.getOrThrow(yield* load({})).x402)).toBe(true)
    })
  )

  it.effect("the simulated facilitator: the network's chain id, 6 decimals by default, payTo as given", () =>
    Effect.gen(function* () {
      const x402 = Option.getOrThrow(Result.getOrThrow(yield* load(SIMULATED)).x402)
      expect(x402).toMatchObject({
        network: "eip155:84532",
        chainId: 84532,
        asset: ASSET,
        assetDecimals: 6,
        payTo: PAY_TO,
        facilitator: { _tag: "simulated" }
      })
      expect(
        Option.getOrThrow(Result.getOrThrow(yield* load({ ...SIMULATED, X402_ASSET_DECIMALS: "18" })).x402)
          .assetDecimals
      ).toBe(18)
    })
  )

  it.effect("a facilitator URL: its address without the trailing slash, the refund wallet and RPC", () =>
    Effect.gen(function* () {
      const x402 = Option.getOrThrow(Result.getOrThrow(yield* load({ ...REAL, ...PRODUCTION })).x402)
      expect(x402.facilitator).toEqual({ _tag: "http", url: "https://facilitator.example" })
      expect(Option.getOrThrow(x402.rpcUrl)).toBe("http://127.0.0.1:8545")
    })
  )

  it.effect("each refusal names its variable", () =>
    Effect.gen(function* () {
      const { X402_PAY_TO: _, ...noPayTo } = SIMULATED
      expect(yield* refusal(noPayTo)).toMatch(/X402_PAY_TO required/)
      expect(yield* refusal({ ...SIMULATED, X402_NETWORK: "base-sepolia" })).toMatch(
        /X402_NETWORK: must be eip155:<chain id>/
      )
      expect(yield* refusal({ ...SIMULATED, X402_ASSET: "usdc" })).toMatch(/X402_ASSET: must be a 0x address/)
      expect(yield* refusal({ ...SIMULATED, X402_PAY_TO: "0x12" })).toMatch(/X402_PAY_TO: must be a 0x address/)
      expect(yield* refusal({ ...SIMULATED, X402_FACILITATOR_URL: "ftp://x" })).toMatch(/X402_FACILITATOR_URL: must be/)
      expect(yield* refusal({ ...SIMULATED, X402_ASSET_DECIMALS: "1" })).toMatch(/X402_ASSET_DECIMALS/)
      expect(yield* refusal({ ...REAL, X402_REFUND_PRIVATE_KEY: "0x12" })).toMatch(/X402_REFUND_PRIVATE_KEY: must be/)
      const { X402_RPC_URL: __, ...noRpc } = REAL
      expect(yield* refusal(noRpc)).toMatch(/X402_REFUND_PRIVATE_KEY and X402_RPC_URL are required/)
    })
  )

  it.effect("production: the facilitator must be https, and the simulated one is refused", () =>
    Effect.gen(function* () {
      expect(yield* refusal({ ...SIMULATED, ...PRODUCTION })).toMatch(/X402_FACILITATOR_URL=simulated in production/)
      expect(yield* refusal({ ...REAL, ...PRODUCTION, X402_FACILITATOR_URL: "http://facilitator.example" })).toMatch(
        /X402_FACILITATOR_URL must be https in production/
      )
      expect(yield* refusal({ ...REAL, X402_FACILITATOR_URL: "http://127.0.0.1:4020" })).toBe("accepted")
    })
  )
})
