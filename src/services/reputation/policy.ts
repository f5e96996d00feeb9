// The reputation formula (docs/reputation.md has the same numbers; test/suites/commerce.test.ts pins
// them) and how many candidates a recommendation scores.
import type { ReputationBand, ReputationInputs } from "../../schema/reputation/reputation.js"

export const REPUTATION_MAX = { reviews: 400, disputes: 200, volume: 250, tenure: 150 } as const
/** Lower bound of each band. */
export const BANDS: ReadonlyArray<{ readonly band: ReputationBand; readonly from: number }> = [
  { band: "Bronze", from: 0 },
  { band: "Silver", from: 350 },
  { band: "Gold", from: 550 },
  { band: "Platinum", from: 750 },
  { band: "Diamond", from: 900 }
]
export const REPUTATION_FORMULA =
  "reviews 400·(b−1)/4 with b=(Σstars+3·2)/(n+2); disputes 200·max(0,1−5·lost/deals) (100 with no deals); " +
  "volume 250·min(1,log10(1+usd)/5); tenure 150·min(1,days/365); " +
  "bands Bronze 0, Silver 350, Gold 550, Platinum 750, Diamond 900"

export const bandOf = (score: number): ReputationBand => [...BANDS].reverse().find((b) => score >= b.from)!.band

export const reputationScore = (i: Omit<ReputationInputs, "agentId">, tenureDays: number) => {
  const bayes = (i.ratingSum + 3 * 2) / (i.reviewsReceived + 2)
  const reviews = Math.round((REPUTATION_MAX.reviews * (bayes - 1)) / 4)
  const disputes =
    i.completedDeals === 0
      ? REPUTATION_MAX.disputes / 2
      : Math.round(REPUTATION_MAX.disputes * Math.max(0, 1 - (5 * i.disputesLost) / i.completedDeals))
  const volume = Math.round(REPUTATION_MAX.volume * Math.min(1, Math.log10(1 + i.volumeCents / 100) / 5))
  const days = Math.max(0, Math.floor(tenureDays))
  const tenure = Math.round(REPUTATION_MAX.tenure * Math.min(1, days / 365))
  const score = Math.max(0, Math.min(1000, reviews + disputes + volume + tenure))
  return { score, reviews, disputes, volume, tenure, days }
}

/**
 * How many services `recommend` scores for `limit` picks: the first this many of the kept ranking
 * (the services' rating; docs/commerce.md, "Recommendations") that the wallet policy allows.
 */
export const recommendCandidates = (limit: number) => Math.min(100, Math.max(20, 4 * limit))

export const emptyInputs = (agentId: string): ReputationInputs => ({
  agentId,
  reviewsReceived: 0,
  ratingSum: 0,
  completedDeals: 0,
  volumeCents: 0,
  disputesLost: 0
})

/** The recommendation score's formula, as the answer states it. */
export const RECOMMEND_FORMULA =
  "score = fit 30·(share of your purchases in the category; 15 without history) + rating 25·(b−1)/4 + " +
  "seller reputation 25·score/1000 + price 20·cheapest/price"
