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
  // Each delivery is judged by the promise it was sold under (a tier changed since applies to later
  // sales only): 95 % of them no slower than their own promised p95 (with one promise for all, the same
  // as the measured p95 within it, by nearest rank), and at least the successes their promised uptimes
  // add up to (the same as the success rate against one uptime).
  const latencyCompliant = s.withinPromise >= Math.ceil(0.95 * s.deliveries)
  const availabilityCompliant = s.successes >= s.expectedSuccesses - 1e-9
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
      `measured over ${s.deliveries} deliveries, each judged by the promise it was sold under: ` +
      `${s.withinPromise} within their promised p95 (p95 ${s.p95LatencyMs} ms; the tier promises ` +
      `${tier.sla.p95LatencyMs} ms now); success ${successRatePct}% vs ` +
      `${Math.round((s.expectedSuccesses / s.deliveries) * 10_000) / 100}% promised`
  }
}
