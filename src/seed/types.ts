// Shapes of the seed data rows (templates, knowledge catalog/base, sellers, commerce services, catalog projects).

export type TemplateCategory =
  | "Communication"
  | "AI & Automation"
  | "Design & Branding"
  | "Infrastructure"
  | "Marketing & Growth"
  | "Developer Tools"
  | "Finance & Investment"
  | "Productivity"

export interface TemplateSeed {
  /** kebab-case slug */
  readonly id: string
  readonly name: string
  readonly category: TemplateCategory
  /** one English sentence */
  readonly description: string
  /** e.g. "$2K–$8K/mo" */
  readonly mrr_potential: string
  /** e.g. "+18% MoM" */
  readonly growth_rate: string
  /** one decimal, 3.8–4.9 */
  readonly rating: number
  /** "Free" or e.g. "$29/mo" */
  readonly price: string
  readonly revenue_share_creator: "85%"
  readonly revenue_share_platform: "15%"
}

export interface KnowledgeProductSeed {
  readonly id: number
  readonly name: string
  readonly slug: string
  readonly description: string
  readonly priceInCents: number
  readonly currency: "usd"
  readonly category: "ai_consultation"
  readonly isActive: boolean
}

export interface KnowledgePhaseSeed {
  readonly name: string
  readonly physiology: string
  readonly femaleSensations: {
    readonly physical: ReadonlyArray<string>
    readonly emotional: ReadonlyArray<string>
    readonly energy: string
  }
  readonly partnerGuidance: {
    readonly do: ReadonlyArray<string>
    readonly avoid: ReadonlyArray<string>
    readonly connection: string
  }
  readonly painScale: {
    readonly min: number
    readonly max: number
    readonly typical: number
    readonly description: string
  }
}

export interface KnowledgeBaseSeed {
  readonly phases: Readonly<Record<string, KnowledgePhaseSeed>>
  readonly story: { readonly title: string; readonly quote: string }
  readonly disclaimer: string
}

export interface SellerAgentSeed {
  /** e.g. "agt_seller_lexica" */
  readonly id: string
  readonly name: string
  readonly organization: string
  /** ISO 8601 */
  readonly createdAt: string
}

export interface ServiceTierSeed {
  /** unique within its service, e.g. "basic" */
  readonly id: string
  readonly name: string
  /** integer cents */
  readonly priceCents: number
  /** e.g. "call", "month", "1k tokens", "page" */
  readonly unit: string
  /** quota per period; null = unlimited */
  readonly includedUnits: number | null
  readonly sla: {
    readonly uptimePct: number
    readonly p95LatencyMs: number
    readonly supportWindow: string
  }
}

export type CommercePricingModel = "per_call" | "monthly" | "usage_based" | "tiered"

export interface CommerceServiceSeed {
  /** e.g. "svc_translate_pro" */
  readonly id: string
  readonly sellerAgentId: string
  readonly name: string
  readonly description: string
  readonly category: string
  readonly pricingModel: CommercePricingModel
  readonly tags: ReadonlyArray<string>
  readonly tiers: ReadonlyArray<ServiceTierSeed>
  readonly negotiation: {
    /** integer 50–95: lowest accepted price as % of list price */
    readonly floorPct: number
    /** integer 5–50: seller's move toward the buyer per round, as % of the gap */
    readonly counterStepPct: number
  }
}

export interface CatalogProjectSeed {
  /** e.g. "prj_..." */
  readonly id: string
  /** must be one of the template ids */
  readonly templateId: string
  readonly name: string
  readonly description: string
  readonly creatorName: string
  /** integer cents */
  readonly askingPriceCents: number
  readonly metrics: {
    readonly mrrCents: number
    readonly monthlyGrowthPct: number
    readonly activeUsers: number
    readonly churnPct: number
    readonly ageMonths: number
  }
  readonly techStack: ReadonlyArray<string>
  /** ISO 8601 */
  readonly createdAt: string
}
