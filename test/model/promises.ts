// One written-out scenario per owner's promise (docs/money.md P1–P4), run through the same harness as
// the generated ones; each failed on the code before the promise was kept.
import * as M from "./model.js"
import type { Op, Scenario } from "./world.js"

const START = Date.UTC(2026, 4, 12, 6)
const FLAT = [
  [100, 150, 300],
  [100, 150, 300],
  [100, 150, 300]
]
const slow = (buyer: number): M.SagaStart => ({ buyer, seller: M.PLATFORM, tier: 1, simulate: "slow" })
/** Agent 0 buys agent `seller`'s tier, the seller answering later (in an answer, late or expire op). */
const order = (seller: number, tier: number): Op => ({
  _tag: "buy",
  b: { buyer: 0, seller, tier, key: null, simulate: "ok", answer: "later" }
})
const deliver = (output: number) => ({ what: "deliver" as const, output })
const fail = (output: number) => ({ what: "fail" as const, output })
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
        { _tag: "buyNegotiated", pick: 0, simulate: "ok" },
        // The agent's live seller answers its negotiations itself; the platform's automatic seller weighs terms.
        {
          _tag: "negotiate",
          buyer: 0,
          seller: M.PLATFORM,
          tier: 0,
          offerPct: 85,
          terms: { volume: 100, durationMonths: 24 }
        }
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
  },
  {
    name: "Orders: charged only when delivered, once; a second delivery changes nothing, the other answer is refused; a failure refunds in full",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        order(1, 0),
        { _tag: "answer", pick: 0, pending: true, answers: [deliver(1), deliver(2)], concurrent: false },
        { _tag: "answer", pick: 0, pending: false, answers: [fail(0)], concurrent: false },
        order(2, 1),
        { _tag: "answer", pick: 0, pending: true, answers: [fail(3), deliver(4)], concurrent: true },
        order(1, 2),
        { _tag: "answer", pick: 0, pending: true, answers: [fail(5), fail(6)], concurrent: false },
        order(2, 0),
        { _tag: "answer", pick: 0, pending: true, answers: [deliver(7), deliver(8)], concurrent: true }
      ]
    }
  },
  {
    name: "Orders: an answer 1 ms before the deadline counts, one at it finds the order expired and refunded; the sweep expires the unanswered",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        order(1, 0),
        { _tag: "late", pick: 0, by: -1, answer: deliver(1) },
        order(1, 1),
        { _tag: "late", pick: 0, by: 0, answer: deliver(2) },
        order(2, 2),
        order(1, 0),
        { _tag: "expire", ms: 10_000 },
        { _tag: "expire", ms: 110_000 },
        { _tag: "answer", pick: 0, pending: false, answers: [deliver(3), fail(4)], concurrent: false }
      ]
    }
  },
  {
    name: "Orders: the escrow of pending orders counts against the daily limit until they end",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        { _tag: "policy", agent: 0, policy: { ...M.DEFAULT_POLICY, dailyLimitCents: 250 } },
        order(1, 0),
        order(2, 1),
        order(1, 0),
        { _tag: "expire", ms: 10_000 },
        order(1, 0),
        { _tag: "answer", pick: 0, pending: true, answers: [deliver(1)], concurrent: false },
        { _tag: "expire", ms: 10_000 },
        order(1, 0)
      ]
    }
  },
  {
    name: "Orders: a failed or expired order gives back the negotiated price its buy redeemed",
    sc: {
      start: START,
      prices: FLAT,
      funding: [2_000, 0, 0],
      ops: [
        { _tag: "negotiate", buyer: 0, seller: 1, tier: 0, offerPct: 85, terms: {} },
        { _tag: "buyNegotiated", pick: 0, simulate: "ok", answer: "later" },
        { _tag: "answer", pick: 0, pending: true, answers: [fail(1)], concurrent: false },
        { _tag: "buyNegotiated", pick: 0, simulate: "ok", answer: "now" },
        { _tag: "buyNegotiated", pick: 1, simulate: "ok", answer: "later" },
        { _tag: "expire", ms: 10_000 },
        { _tag: "buyNegotiated", pick: 1, simulate: "ok", answer: "now" }
      ]
    }
  }
]
