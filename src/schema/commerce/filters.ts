// What the commerce stores are asked for: the catalogue's filters, the recommendations' ranked walk
// and the transaction history's filter.
import type { PricingModel } from "./common.js"
import type { TransactionStatus } from "./transactions.js"

export interface ServiceFilter {
  readonly category?: string
  readonly pricingModel?: PricingModel
  readonly minPriceCents?: number
  readonly maxPriceCents?: number
  readonly minRating?: number
  readonly sellerId?: string
  readonly q?: string
  /** Keyset: services with id greater than this. */
  readonly afterId?: string
  readonly limit: number
}

/**
 * The recommendations' candidates (docs/commerce.md, "Recommendations"): listed services in the
 * kept ranking's order — the Bayesian mean of their stars, (ratingSum + 3·2) / (ratingCount + 2),
 * highest first, ties by id — with a buyer's wallet policy applied while walking.
 */
export interface RankedFilter {
  readonly category?: string
  /** Left out: the buyer's own services. */
  readonly excludeSeller?: string
  /** Only these sellers / categories (a wallet's allowed lists); null: any. */
  readonly sellers: ReadonlyArray<string> | null
  readonly categories: ReadonlyArray<string> | null
  /** Only services with a tier at or under this price (a per-transaction limit); null: any. */
  readonly maxTierCents: number | null
  readonly limit: number
}

/** A service's place in the kept ranking: the Bayesian mean of its stars (3 with no review). */
export const rankOf = (r: { readonly ratingSum: number; readonly ratingCount: number }) =>
  (r.ratingSum + 3 * 2) / (r.ratingCount + 2)

export interface TransactionFilter {
  readonly agentId: string
  readonly role?: "buyer" | "seller"
  readonly serviceId?: string
  readonly status?: TransactionStatus
  readonly from?: string
  readonly to?: string
  /** Keyset (newest first): rows strictly before (createdAt, id). */
  readonly before?: { readonly createdAt: string; readonly id: string }
  readonly limit: number
}
