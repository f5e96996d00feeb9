// Rows the history benches seed through the stores (bench/history.ts in process, bench/historyServer.ts
// inside the server): a completed purchase and a listed service of a grown marketplace. Seed data
// for reads only: no ledger entry is written with them, so the purchase carries its whole price as
// the seller's share (nothing reads the split).
import type { ServiceRecord } from "../src/schema/commerce/services.js"
import type { TransactionRecord } from "../src/schema/commerce/transactions.js"

const DAY = 86_400_000

/** The i-th of n completed purchases spread evenly over the `days` days before `now`. */
export const seededPurchase = (
  p: Pick<
    TransactionRecord,
    "id" | "buyerAgentId" | "sellerAgentId" | "serviceId" | "serviceName" | "category" | "tierId" | "priceCents"
  >,
  at: { readonly i: number; readonly n: number; readonly days: number; readonly now: number }
): TransactionRecord =>
  ({
    ...p,
    pricingModel: "per_call",
    listPriceCents: p.priceCents,
    sellerCents: p.priceCents,
    feeCents: 0,
    negotiationId: null,
    approvalId: null,
    idempotencyKey: null,
    status: "completed",
    ledgerEntryId: null,
    createdAt: new Date(at.now - at.days * DAY + Math.floor((at.i * at.days * DAY) / Math.max(1, at.n))).toISOString(),
    refundedAt: null
  }) as TransactionRecord

/** The i-th service of a grown marketplace: 2,000 sellers, one tier at 1–5,000 cents. */
export const marketService = (
  i: number,
  s: { readonly category: string; readonly description: string; readonly now: number }
): ServiceRecord =>
  ({
    id: `svc_m${String(i).padStart(6, "0")}`,
    sellerAgentId: `agt_mseller${i % 2000}`,
    name: `Market service ${i}`,
    description: s.description,
    category: s.category,
    pricingModel: "per_call",
    tags: [],
    tiers: [
      {
        id: "unit",
        name: "unit",
        priceCents: 1 + (i % 5000),
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 80, counterStepPct: 20 },
    status: "active",
    ratingSum: 0,
    ratingCount: 0,
    createdAt: new Date(s.now).toISOString(),
    updatedAt: new Date(s.now).toISOString()
  }) as unknown as ServiceRecord

const GROWTH_CATEGORIES = [
  "translation",
  "transcription",
  "image-generation",
  "moderation",
  "data-extraction",
  "embeddings",
  "code-review",
  "summarization"
]

/**
 * The i-th service a seller publishes over HTTP in the catalogue-growth rows (bench/catalogueGrowth.ts):
 * the eight seed categories in turn, 1 in 100 about forecasts, one tier at 1–5,000 cents spread so
 * that every thousand services covers the whole range (the 1,000 and the 20,000 look alike).
 */
export const marketServiceBody = (i: number) => ({
  name: `Market service ${i}`,
  description: i % 100 === 7 ? `weekly demand forecast ${i % 997}` : `reports and analyses ${i % 997}`,
  category: GROWTH_CATEGORIES[i % GROWTH_CATEGORIES.length],
  pricingModel: "per_call",
  tiers: [
    {
      id: "unit",
      name: "unit",
      priceCents: 1 + ((i * 7919) % 5000),
      unit: "call",
      includedUnits: null,
      sla: { uptimePct: 99, p95LatencyMs: 1000, supportWindow: "24/7" }
    }
  ]
})
