// The simulated seller delivery (the seeded services call no real model; docs/commerce.md): how long
// the deliver step waits, the behaviour an input asks for, and the deterministic output.
import { Effect } from "effect"
import type { CommerceService, ServiceTier } from "../../schema/commerce/services.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { DeliveryMode } from "../../schema/saga/saga.js"
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import type { Offer, OfferTier } from "./Offers.js"

/** How long the deliver step waits for the seller: twice the tier's p95 latency, within 1–30 s. */
export const deliverTimeoutMs = (tier: OfferTier) => Math.min(30_000, Math.max(1_000, 2 * tier.sla.p95LatencyMs))

/** The simulated seller behaviour the input asks for (`{"simulate": "fail" | "timeout" | "slow", "delayMs": n}`). */
export const deliveryModeOf = (input: unknown): { readonly mode: DeliveryMode; readonly delayMs: number } => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { mode: "ok", delayMs: 0 }
  const record = input as Record<string, unknown>
  const simulate = record.simulate
  const delay =
    typeof record.delayMs === "number" && Number.isSafeInteger(record.delayMs) && record.delayMs >= 0
      ? record.delayMs
      : undefined
  if (simulate === "fail") return { mode: "fail", delayMs: 0 }
  if (simulate === "timeout") return { mode: "timeout", delayMs: 0 }
  if (simulate === "slow") return { mode: "slow", delayMs: Math.min(delay ?? 1_000, 600_000) }
  return { mode: "ok", delayMs: 0 }
}

const asIs = { mode: "ok", delayMs: 0 } as const

/**
 * The behaviour a delivery simulates: what the input asks for, when the seller is one of the
 * platform's simulated sellers (an agent of the platform sellers account); on a service another
 * agent published the buyer does not decide the seller's outcome, and `simulate` is plain input.
 * The seller is looked up only when the input asks for something.
 */
export const deliveryModes =
  (agents: {
    readonly getAgent: (id: string) => Effect.Effect<{ readonly accountId: string } | undefined, StorageUnavailable>
  }) =>
  (
    input: unknown,
    sellerAgentId: string
  ): Effect.Effect<{ readonly mode: DeliveryMode; readonly delayMs: number }, StorageUnavailable> => {
    const asked = deliveryModeOf(input)
    if (asked.mode === "ok") return Effect.succeed(asked)
    return Effect.map(agents.getAgent(sellerAgentId), (agent) =>
      agent?.accountId === PLATFORM_SELLERS_ACCOUNT ? asked : asIs
    )
  }

const digest = (s: string) => {
  // FNV-1a: a short deterministic fingerprint of the input, so the simulated output depends on it.
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

/** The deterministic, simulated output of a successful delivery (no real model is called). */
export const simulatedOutput = (offer: Offer, input: unknown, reference: string) => ({
  simulated: true,
  serviceId: offer.service.id,
  tierId: offer.tier.id,
  reference,
  summary: `${offer.service.name} (${offer.tier.name}) processed the request`,
  inputFingerprint: digest(JSON.stringify(input ?? null)),
  units: 1,
  unit: offer.tier.unit
})

/** A tier as any caller holds it (seed rows and offers carry plain numbers, the catalog branded cents). */
export type TierLike = Omit<ServiceTier, "priceCents"> & { readonly priceCents: number }

export interface SimulatedDelivery {
  readonly success: boolean
  /** Simulated, deterministic latency in ms (a function of the input and the tier's p95). */
  readonly latencyMs: number
  readonly output: unknown
  readonly error: string | null
}

/**
 * Runs a seller's service on `input`, deterministically, without sleeping. `{"simulate":"fail"}`
 * fails, `{"simulate":"timeout"}` fails after the deliver timeout (2 × p95, 1–30 s),
 * `{"simulate":"slow","delayMs":n}` succeeds after n ms; otherwise it succeeds within 20–90 % of
 * the tier's p95 latency (the fraction comes from the input's fingerprint).
 */
export const simulateDelivery = (
  service: Pick<CommerceService, "id" | "sellerAgentId" | "name" | "category" | "pricingModel" | "negotiation"> & {
    readonly tiers: ReadonlyArray<TierLike>
  },
  tier: TierLike,
  input: unknown,
  reference = "simulation",
  mode: { readonly mode: DeliveryMode; readonly delayMs: number } = deliveryModeOf(input)
): SimulatedDelivery => {
  const output = simulatedOutput({ service, tier }, input, reference)
  const fraction = parseInt(output.inputFingerprint, 16) / 0x1_0000_0000
  switch (mode.mode) {
    case "fail":
      return {
        success: false,
        latencyMs: Math.max(1, Math.round(tier.sla.p95LatencyMs / 2)),
        output: null,
        error: "the seller reported a failure (simulated)"
      }
    case "timeout": {
      const ms = deliverTimeoutMs(tier)
      return {
        success: false,
        latencyMs: ms,
        output: null,
        error: `the seller did not deliver within ${ms} ms (simulated timeout)`
      }
    }
    case "slow":
      return { success: true, latencyMs: mode.delayMs, output, error: null }
    case "ok":
      return {
        success: true,
        latencyMs: Math.max(1, Math.round(tier.sla.p95LatencyMs * (0.2 + 0.7 * fraction))),
        output,
        error: null
      }
  }
}
