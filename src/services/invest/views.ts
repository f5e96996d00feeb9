// How the invest domain's records are shown: offerings and holdings in the token's units.
import {
  Holding,
  type HoldingRecord,
  Offering,
  type OfferingRecord,
  PLATFORM_TARGET,
  targetOf
} from "../../schema/invest/invest.js"

/** The views, for the configured token symbol. */
export const investViews = (tokenSymbol: string) => {
  const unitOf = (target: string) => (target === PLATFORM_TARGET ? tokenSymbol : `${tokenSymbol}:${target}`)

  const toOffering = (o: OfferingRecord) => {
    const remaining = o.offeredTokens - o.soldTokens
    return Offering.make({
      target: targetOf(o.target),
      unit: unitOf(o.target),
      totalSupply: o.totalSupply,
      offeredTokens: o.offeredTokens,
      soldTokens: o.soldTokens,
      remainingTokens: remaining,
      stakePercent: 49,
      priceCentsPerToken: o.priceCents as Offering["priceCentsPerToken"],
      valuationCents: o.totalSupply * o.priceCents,
      remainingCents: remaining * o.priceCents
    })
  }

  const toHolding = (h: HoldingRecord, totalSupply: number) =>
    Holding.make({
      agentId: h.agentId,
      target: targetOf(h.target),
      unit: unitOf(h.target),
      tokens: h.tokens,
      investedCents: h.investedCents as Holding["investedCents"],
      ownershipPercent: Math.round((h.tokens / totalSupply) * 100 * 1e6) / 1e6,
      firstInvestedAt: h.firstInvestedAt,
      lastInvestedAt: h.lastInvestedAt
    })

  return { unitOf, toOffering, toHolding }
}
