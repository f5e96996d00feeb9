// One written-out scenario per owner's promise (docs/money.md P1–P4), run through the same harness as
// the generated ones; each failed on the code before the promise was kept.
import * as M from "./model.js"
import type { Scenario } from "./world.js"

const START = Date.UTC(2026, 4, 12, 6)
const FLAT = [
  [100, 150, 300],
  [100, 150, 300],
  [100, 150, 300]
]
const slow = (buyer: number): M.SagaStart => ({ buyer, seller: M.PLATFORM, tier: 1, simulate: "slow" })
export const promises: ReadonlyArray<{ readonly name: string; readonly sc: Scenario }> = [
  {
    name: "P1: money held by running sagas counts against the limits (sagas one after another and at once, then /buy)",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        { _tag: "policy", agent: 0, policy: { ...M.DEFAULT_POLICY, dailyLimitCents: 400, monthlyLimitCents: 1_000 } },
        { _tag: "sagas", starts: [slow(0)] },
        { _tag: "sagas", starts: [slow(0), slow(0), slow(0)] },
        { _tag: "buy", b: { buyer: 0, seller: 1, tier: 0, key: null, simulate: "ok" } },
        { _tag: "advance", ms: 1_000 },
        { _tag: "buy", b: { buyer: 0, seller: 1, tier: 0, key: null, simulate: "ok" } }
      ]
    }
  },
  {
    name: "P2: an approval whose price changed while it waited (up or down) is void and charges nothing",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        { _tag: "policy", agent: 0, policy: { ...M.DEFAULT_POLICY, autonomyLevel: "manual" } },
        { _tag: "buy", b: { buyer: 0, seller: 1, tier: 0, key: "k1", simulate: "ok" } },
        { _tag: "buy", b: { buyer: 0, seller: 2, tier: 1, key: null, simulate: "ok" } },
        { _tag: "reprice", seller: 1, tier: 0, price: 250, approval: null },
        { _tag: "reprice", seller: 2, tier: 1, price: 99, approval: null },
        { _tag: "approve", pick: 0 },
        { _tag: "approve", pick: 1 },
        { _tag: "decline", pick: 0 },
        { _tag: "buy", b: { buyer: 0, seller: 1, tier: 0, key: "k1", simulate: "ok" } }
      ]
    }
  },
  {
    name: "P4: terms give no discount; a negotiated price is one purchase at that price",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        { _tag: "negotiate", buyer: 0, seller: 1, tier: 0, offerPct: 85, terms: { volume: 100, durationMonths: 24 } },
        { _tag: "buyNegotiated", pick: 0, simulate: "ok" },
        { _tag: "buyNegotiated", pick: 0, simulate: "ok" }
      ]
    }
  },
  {
    name: "P3: only the platform's seeded sellers simulate a failed delivery",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        { _tag: "buy", b: { buyer: 0, seller: 1, tier: 0, key: null, simulate: "fail" } },
        { _tag: "sagas", starts: [{ buyer: 0, seller: 2, tier: 0, simulate: "timeout" }] },
        { _tag: "buy", b: { buyer: 0, seller: M.PLATFORM, tier: 0, key: null, simulate: "fail" } },
        { _tag: "sagas", starts: [{ buyer: 0, seller: M.PLATFORM, tier: 0, simulate: "fail" }] }
      ]
    }
  }
]
