// The x402 ports chosen from configuration (docs/x402.md): none configured → ports that refuse
// (x402 is not offered, nothing calls them); X402_FACILITATOR_URL=simulated → the simulated chain
// and facilitator; a facilitator URL → the facilitator over HTTP, the chain and the refund wallet
// through viem over X402_RPC_URL.
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Chain, ChainUnavailable, Facilitator, FacilitatorUnavailable, Refunds } from "../../services/x402/ports.js"
import { httpFacilitator } from "./Facilitator.http.js"
import { viemChain } from "./chain.viem.js"
import { SimulatedX402Live } from "./simulated.js"

const off = (operation: "verify" | "settle" | "supported") =>
  Effect.fail(new FacilitatorUnavailable({ operation, reason: "x402 is not configured" }))
const noChain = Effect.fail(new ChainUnavailable({ reason: "x402 is not configured" }))

const NotConfigured = Layer.mergeAll(
  Layer.succeed(
    Facilitator,
    Facilitator.of({ verify: () => off("verify"), settle: () => off("settle"), supported: off("supported") })
  ),
  Layer.succeed(Chain, Chain.of({ authorizationState: () => noChain, now: noChain, transfersIn: () => noChain })),
  Layer.succeed(Refunds, Refunds.of({ sign: () => noChain, send: () => noChain }))
)

export const X402PortsLive = Layer.unwrap(
  Effect.map(AppConfig, (config) => {
    if (Option.isNone(config.x402)) return NotConfigured
    const x402 = config.x402.value
    if (x402.facilitator._tag === "simulated") return SimulatedX402Live
    return Layer.merge(httpFacilitator(x402.facilitator.url, x402.facilitatorTimeoutMs), viemChain(x402))
  })
)
