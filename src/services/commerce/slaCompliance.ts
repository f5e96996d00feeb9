// One tier's SLA compliance, measured from its recorded deliveries over the window.
import type { ServiceTier } from "../../schema/commerce/services.js"
import type { TierDeliveryStats } from "./CatalogStore.js"

export const SLA_WINDOW_DAYS = 30

/** One tier's SLA compliance from its delivery aggregates over the window (none: "no_data"). */
export const complianceOf = (tier: ServiceTier, s: TierDeliveryStats | undefined) => {
  if (!s || s.deliveries === 0) {
    return {
      tierId: tier.id,
      sla: tier.sla,
      status: "no_data" as const,
      deliveries: 0,
      successes: 0,
      successRatePct: null,
      measuredP95LatencyMs: null,
      latencyCompliant: null,
      availabilityCompliant: null,
      note: `no deliveries of this tier recorded in the last ${SLA_WINDOW_DAYS} days; compliance cannot be measured yet`
    }
  }
  const successRatePct = Math.round((s.successes / s.deliveries) * 10_000) / 100
  const latencyCompliant = s.p95LatencyMs !== null && s.p95LatencyMs <= tier.sla.p95LatencyMs
  const availabilityCompliant = successRatePct >= tier.sla.uptimePct
  return {
    tierId: tier.id,
    sla: tier.sla,
    status: latencyCompliant && availabilityCompliant ? ("compliant" as const) : ("breached" as const),
    deliveries: s.deliveries,
    successes: s.successes,
    successRatePct,
    measuredP95LatencyMs: s.p95LatencyMs,
    latencyCompliant,
    availabilityCompliant,
    note:
      `measured over ${s.deliveries} deliveries: p95 ${s.p95LatencyMs} ms vs ${tier.sla.p95LatencyMs} ms promised; ` +
      `success ${successRatePct}% vs ${tier.sla.uptimePct}% promised`
  }
}
