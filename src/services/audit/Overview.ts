// Overview: the account's agents at a glance for the owner. One read of the agents, one of all their
// wallet figures and one of their latest refusals: the same three reads for one agent or for the
// account's most, never one per agent.
import { Clock, Context, Effect, Layer } from "effect"
import type { Overview as OverviewView, OverviewAgent } from "../../schema/audit/overview.js"
import { cents } from "../../schema/platform/common.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { initialWallet, utcDayStart, utcMonthStart } from "../../schema/wallet/policy.js"
import { Keys } from "../keys/Keys.js"
import { Refusals } from "../refusals/Refusals.js"
import { OverviewStore } from "./OverviewStore.js"

export interface OverviewService {
  /** Every agent of the account with its wallet figures, limits, freeze, pending approvals and last refusal. */
  readonly overview: (accountId: string) => Effect.Effect<OverviewView, StorageUnavailable>
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const make = Effect.gen(function* () {
  const keys = yield* Keys
  const refusals = yield* Refusals
  const store = yield* OverviewStore

  const overview = Effect.fnUntraced(function* (accountId: string) {
    const now = yield* Clock.currentTimeMillis
    const agents = yield* keys.listAgents(accountId)
    const [figures, latest] = yield* Effect.all(
      [
        store.figures(
          agents.map((a) => a.id),
          {
            dayStart: day(utcDayStart(now)),
            monthStart: day(utcMonthStart(now)),
            today: day(now),
            nowIso: new Date(now).toISOString()
          }
        ),
        refusals.latestByAgent(accountId)
      ],
      { concurrency: 2 }
    )
    const rows = agents.map((agent): OverviewAgent => {
      const f = figures.get(agent.id)
      const policy = f?.policy ?? initialWallet(agent.id, now).policy
      const spentToday = f?.spentTodayCents ?? 0
      const held = f?.heldCents ?? 0
      const daily = policy.dailyLimitCents
      return {
        id: agent.id,
        name: agent.name,
        balanceCents: cents(f?.balanceCents ?? 0),
        spentTodayCents: cents(spentToday),
        spentThisMonthCents: cents(f?.spentThisMonthCents ?? 0),
        heldCents: cents(held),
        remainingTodayCents: daily === null ? null : cents(Math.max(0, daily - spentToday - held)),
        limits: {
          perPurchaseCents: policy.perTransactionLimitCents,
          dailyCents: daily,
          monthlyCents: policy.monthlyLimitCents
        },
        autonomyLevel: policy.autonomyLevel,
        approvalThresholdCents: policy.approvalThresholdCents,
        frozen: policy.frozen,
        pendingApprovals: f?.pendingApprovals ?? 0,
        lastRefusal: latest.get(agent.id) ?? null
      }
    })
    const view: OverviewView = {
      agents: rows,
      pendingApprovals: rows.reduce((n, r) => n + r.pendingApprovals, 0),
      generatedAt: new Date(now).toISOString()
    }
    return view
  })

  return { overview } satisfies OverviewService
})

export class Overview extends Context.Service<Overview, OverviewService>()("agent-commerce/Overview") {
  /** Provides the domain services it reads; only ports (stores) stay open. */
  static readonly layer = Layer.effect(Overview, make).pipe(Layer.provide([Keys.layer, Refusals.layer]))
}
