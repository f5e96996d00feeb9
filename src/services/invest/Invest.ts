// Invest: the platform utility token and project stakes (49 % offered, never oversold) and holdings.
// The proposals those holdings vote on are the Governance service's (Governance.ts). Numbers and
// rules: docs/investment.md.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import {
  type IdempotencyKeyReused,
  InvalidInput,
  type NotFound,
  type StorageUnavailable
} from "../../schema/platform/errors.js"
import {
  Holding,
  type InvestBody,
  Investment,
  type InvestmentRecord,
  Offering,
  type OfferingRecord,
  PLATFORM_TARGET,
  StakeExhausted,
  targetOf
} from "../../schema/invest/invest.js"
import { type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import type { PolicyViolation } from "../../schema/commerce/wallets.js"
import { Refusals } from "../refusals/Refusals.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import { Ids, Transactor } from "../platform/Db.js"
import { Wallet } from "../wallet/Wallet.js"
import { Ledger } from "../ledger/Ledger.js"
import { Projects } from "../projects/Projects.js"
import { investViews } from "./views.js"
import { InvestStore } from "./InvestStore.js"
import {
  disclaimerText,
  investmentAccount,
  offeredOf,
  PLATFORM_TOKEN_PRICE_CENTS,
  PLATFORM_TOTAL_SUPPLY,
  PROJECT_TOTAL_UNITS,
  projectUnitPrice,
  type TokenInfo
} from "./policy.js"

export interface InvestService {
  /** Buys tokens of the platform, or stake units of a project, from the wallet. */
  readonly invest: (
    agentId: string,
    body: InvestBody,
    keyed?: KeyedRequest
  ) => Effect.Effect<
    { investment: Investment; holding: Holding; offering: Offering; token: TokenInfo; disclaimer: string },
    | IdempotencyKeyReused
    | InsufficientFunds
    | InvalidInput
    | NotFound
    | PolicyViolation
    | StakeExhausted
    | StorageUnavailable
  >
  readonly offering: (projectId?: string) => Effect.Effect<Offering, NotFound | StorageUnavailable>
  /** Holdings of the given agents (one agent, or every agent of an account). */
  readonly holdings: (
    agentIds: ReadonlyArray<string>
  ) => Effect.Effect<
    { agentIds: Array<string>; holdings: Array<Holding>; token: TokenInfo; disclaimer: string },
    StorageUnavailable
  >
  readonly token: TokenInfo
  readonly disclaimer: string
}

const make = Effect.gen(function* () {
  const store = yield* InvestStore
  const ledger = yield* Ledger
  const wallet = yield* Wallet
  const projects = yield* Projects
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const refusals = yield* Refusals
  const receipts = yield* WriteReceipts
  const config = yield* AppConfig
  const token: TokenInfo = {
    name: config.tokenName,
    symbol: config.tokenSymbol,
    type: "utility",
    classification: "utility token, not a security"
  }
  const disclaimer = disclaimerText(config.tokenName, config.tokenSymbol)
  const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const { unitOf, toOffering, toHolding } = investViews(config.tokenSymbol)

  const investPath = { tierId: null, priceCents: null, path: "invest" } as const
  const normaliseTarget = (projectId: string | undefined) =>
    projectId === undefined || projectId === PLATFORM_TARGET ? PLATFORM_TARGET : projectId

  /** The terms of a target's offering before anyone invested (NotFound for an unknown project). */
  const defaultsFor = Effect.fnUntraced(function* (target: string) {
    const createdAt = yield* nowIso
    if (target === PLATFORM_TARGET) {
      return {
        target,
        totalSupply: PLATFORM_TOTAL_SUPPLY,
        offeredTokens: offeredOf(PLATFORM_TOTAL_SUPPLY),
        soldTokens: 0,
        priceCents: PLATFORM_TOKEN_PRICE_CENTS,
        createdAt
      } satisfies OfferingRecord
    }
    const listing = yield* projects.getListing(target)
    return {
      target,
      totalSupply: PROJECT_TOTAL_UNITS,
      offeredTokens: offeredOf(PROJECT_TOTAL_UNITS),
      soldTokens: 0,
      priceCents: projectUnitPrice(listing.askingPriceCents),
      createdAt
    } satisfies OfferingRecord
  })

  const offering = Effect.fnUntraced(function* (projectId?: string) {
    const target = normaliseTarget(projectId)
    const stored = yield* store.getOffering(target)
    return toOffering(stored ?? (yield* defaultsFor(target)))
  })

  /** A committed investment as its first answer had it: the row, the holding and offering as they stand. */
  const investedBefore = Effect.fnUntraced(function* (id: string) {
    const row = yield* store.getInvestment(id)
    const holding = row && (yield* store.getHolding(row.agentId, row.target))
    const after = row && (yield* store.getOffering(row.target))
    if (!row || !holding || !after) return yield* Effect.die(new Error(`investment ${id} has a receipt but no row`))
    return { row, holding, after }
  })

  const invest = Effect.fnUntraced(function* (agentId: string, body: InvestBody, keyed?: KeyedRequest) {
    if ((body.tokens === undefined) === (body.amountCents === undefined)) {
      return yield* Effect.fail(
        new InvalidInput({ message: "give exactly one of tokens or amountCents", field: "tokens" })
      )
    }
    const target = normaliseTarget(body.projectId)
    const write = atomically(
      Effect.gen(function* () {
        // The offering row is the lock: concurrent investments in one target are serialised here.
        const o = yield* store.lockOffering(yield* defaultsFor(target))
        const tokens = body.tokens ?? Math.floor(body.amountCents! / o.priceCents)
        if (tokens < 1) {
          return yield* Effect.fail(
            new InvalidInput({
              message: `amountCents buys less than one token at ${o.priceCents} cents per token`,
              field: "amountCents"
            })
          )
        }
        const remaining = o.offeredTokens - o.soldTokens
        if (tokens > remaining) {
          return yield* Effect.fail(
            new StakeExhausted({
              message:
                `only ${remaining} of the ${o.offeredTokens} tokens of the 49% stake remain ` +
                `(${remaining * o.priceCents} cents); ${tokens} requested`,
              target: targetOf(target),
              requestedTokens: tokens,
              remainingTokens: remaining,
              remainingCents: remaining * o.priceCents
            })
          )
        }
        const amount = tokens * o.priceCents
        // An investment spends the wallet: the owner's amount limits apply and it counts as spend.
        yield* wallet.debitOutsidePurchase(agentId, amount)
        const id = yield* ids.make("inv")
        const at = yield* nowIso
        const entry = yield* ledger.transfer({
          kind: "investment",
          reference: id,
          memo: `${tokens} ${unitOf(target)}`,
          from: walletAccount(agentId),
          to: investmentAccount(target),
          amount
        })
        const after: OfferingRecord = { ...o, soldTokens: o.soldTokens + tokens }
        yield* store.setSold(target, after.soldTokens)
        const row: InvestmentRecord = {
          id,
          agentId,
          target,
          tokens,
          priceCents: o.priceCents,
          amountCents: amount,
          journalEntryId: entry.id,
          createdAt: at
        }
        yield* store.insertInvestment(row)
        const holding = yield* store.addToHolding(agentId, target, tokens, amount, at)
        return { row, holding, after }
      })
    )
    // A retry whose first attempt committed (its answer lost) gets that investment, charged once.
    const result = yield* receipts
      .once({
        keyed,
        kind: "invest",
        request: { agentId, body },
        write,
        idOf: (r) => r.row.id,
        replay: investedBefore
      })
      .pipe(
        // A debit the wallet refused (a limit, the freeze, the balance) is kept for the owner.
        refusals.recordingRefusal({ agentId, serviceId: null, serviceName: `investment in ${target}`, ...investPath })
      )
    return {
      investment: Investment.make({
        id: result.row.id,
        agentId,
        target: targetOf(target),
        unit: unitOf(target),
        tokens: result.row.tokens,
        priceCentsPerToken: result.row.priceCents as Investment["priceCentsPerToken"],
        amountCents: result.row.amountCents as Investment["amountCents"],
        journalEntryId: result.row.journalEntryId,
        createdAt: result.row.createdAt
      }),
      holding: toHolding(result.holding, result.after.totalSupply),
      offering: toOffering(result.after),
      token,
      disclaimer
    }
  }, traced("Invest.invest"))

  /** Holdings of the given agents (one agent, or every agent of an account). */
  const holdings = Effect.fnUntraced(function* (agentIds: ReadonlyArray<string>) {
    const rows = yield* store.holdingsFor(agentIds)
    const supply = new Map<string, number>()
    for (const t of new Set(rows.map((r) => r.target))) {
      const o = yield* store.getOffering(t)
      supply.set(t, o?.totalSupply ?? (t === PLATFORM_TARGET ? PLATFORM_TOTAL_SUPPLY : PROJECT_TOTAL_UNITS))
    }
    return {
      agentIds: [...agentIds],
      holdings: rows.map((h) => toHolding(h, supply.get(h.target)!)),
      token,
      disclaimer
    }
  }, traced("Invest.holdings"))

  return Invest.of({ invest, offering, holdings, token, disclaimer })
})

export class Invest extends Context.Service<Invest, InvestService>()("agent-commerce/Invest") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Invest, make).pipe(
    Layer.provide([Ledger.layer, Projects.layer, Wallet.layer, Refusals.layer, WriteReceipts.layer])
  )
}
