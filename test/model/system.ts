// The system side of the money model: the stores of one storage (kept across restarts) with fault
// points on the writes each path ends with, the services on top (commerce, wallets, sagas,
// negotiations and negotiated prices, disputes), and the answers reduced to the model's Outcome.
import { Clock, Context, Effect, Layer, Option, Redacted, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StorageUnavailable } from "../../src/schema/platform/errors.js"
import { EmbeddedStorageLive, MemoryStorageLive, PgStorageLive } from "../../src/layers/stores.js"
import { AppConfig } from "../../src/services/platform/AppConfig.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { PurchaseStore } from "../../src/services/purchases/PurchaseStore.js"
import { NegotiatedPricesLive } from "../../src/services/negotiation/NegotiatedPricesLive.js"
import { Ids } from "../../src/services/platform/Db.js"
import { KeysStore } from "../../src/services/keys/KeysStore.js"
import { Agent } from "../../src/schema/keys/keys.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Mpp } from "../../src/services/mpp/Mpp.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { SettlementStore } from "../../src/services/purchases/SettlementStore.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { freshDatabase, migratedDataDir, type StorageCase } from "../fixtures/db.js"
import { agentCaller, commerceServices, serviceBody, type tier, unlimitedWallet } from "../fixtures/money.js"
import type * as M from "./model.js"
import type { FaultPoint } from "./world.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"

/** The stores of a storage, as every storage provides them (the SQL ones the SQL client too), and the configuration they were built with. */
export type Stores = Layer.Success<typeof MemoryStorageLive> | AppConfig

export interface Faults {
  armed: FaultPoint | undefined
  tripped: boolean
}

/** The stores with a fault point on the writes each path ends with: the write is done, then fails (the unit of work must roll it back). */
export const withFaults = (stores: Context.Context<Stores>, faults: Faults): Context.Context<Stores> => {
  const trip = (point: FaultPoint) =>
    Effect.suspend(() => {
      if (faults.armed !== point) return Effect.void
      faults.armed = undefined
      faults.tripped = true
      return Effect.fail(new StorageUnavailable({ message: `injected fault after the ${point} write` }))
    })
  const settlement = Context.get(stores, SettlementStore)
  const ledger = Context.get(stores, LedgerStore)
  const wallet = Context.get(stores, WalletStore)
  const commerce = Context.get(stores, PurchaseStore)
  let ctx = Context.add(stores, SettlementStore, {
    ...settlement,
    write: (x) => Effect.andThen(settlement.write(x), trip("settlement"))
  })
  ctx = Context.add(ctx, LedgerStore, { ...ledger, append: (e) => Effect.andThen(ledger.append(e), trip("ledger")) })
  ctx = Context.add(ctx, WalletStore, { ...wallet, put: (w) => Effect.andThen(wallet.put(w), trip("wallet")) })
  return Context.add(ctx, PurchaseStore, {
    ...commerce,
    updateApproval: (a) => Effect.andThen(commerce.updateApproval(a), trip("approval"))
  })
}

export interface Storage {
  readonly name: StorageCase["name"]
  readonly open: (scope: Scope.Scope) => Effect.Effect<Context.Context<Stores>, unknown>
}

// The seller's automatic negotiation answer is due at once (the harness answers it with runDue, on its own clock).
// No background workers: the model drives sagas itself, and the order sweeper would read the live
// clock, not the model's (expiring every order placed in the model's past).
const config = { negotiationDelayMs: 0, workers: false }

/** Storage for one case: `open` builds the stores in a scope; a restart closes it and opens again over the same data (memory: the same stores). */
export const storageFor = (c: StorageCase) =>
  Effect.gen(function* () {
    if (c.name === "memory") {
      const stores = yield* Layer.build(
        MemoryStorageLive.pipe(Layer.provideMerge(AppConfig.test({ ...config, storage: "memory" })))
      )
      return {
        name: c.name,
        open: (_scope: Scope.Scope) => Effect.succeed<Context.Context<Stores>>(stores)
      } satisfies Storage
    }
    if (c.name === "embedded") {
      const dir = mkdtempSync(join(tmpdir(), "model-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      // Migrated already (a copy of the process's migrated folder): the run starts where a first start ends.
      yield* Effect.promise(() => migratedDataDir(dir))
      const layer = EmbeddedStorageLive.pipe(
        Layer.provideMerge(AppConfig.test({ ...config, storage: "embedded", dataDir: dir }))
      )
      return { name: c.name, open: (scope: Scope.Scope) => Layer.buildWithScope(layer, scope) } satisfies Storage
    }
    const { url } = yield* freshDatabase
    const layer = PgStorageLive.pipe(
      Layer.provideMerge(
        AppConfig.test({ ...config, storage: "postgres", databaseUrl: Option.some(Redacted.make(url)) })
      )
    )
    return { name: c.name, open: (scope: Scope.Scope) => Layer.buildWithScope(layer, scope) } satisfies Storage
  })

const offers = CatalogOffersLive.pipe(Layer.provide(Catalog.layer))
/** Commerce (with negotiated prices), wallets, disputes, sagas, negotiations, paid calls (MPP) and the sellers' orders over the stores. */
export const servicesLayer = Layer.merge(commerceServices, Orders.layer).pipe(
  Layer.provideMerge(
    Layer.mergeAll(Sagas.layer, Mpp.layer).pipe(
      Layer.provideMerge(NegotiatedPricesLive),
      Layer.provideMerge(Negotiations.layer)
    )
  ),
  Layer.provideMerge(offers),
  Layer.provideMerge(SagaOrderOwnersLive),
  Layer.provideMerge(Ids.Live)
)
/** The services the model's operations run on, over the stores. */
export type Services = Layer.Success<typeof servicesLayer>

/**
 * An agent of its own account (not one of the platform's seeded sellers: its deliveries simulate
 * nothing) with one published service of the given tiers. It is a real seller (pull fulfilment):
 * `simulate` in a buyer's input is plain input to it, and its orders wait for its answer.
 */
export const agentSeller = (name: string, tiers: ReadonlyArray<ReturnType<typeof tier>>, category: string) =>
  Effect.gen(function* () {
    const agentId = yield* Effect.flatMap(Ids, (ids) => ids.make("agt"))
    const accountId = `acct_${agentId}`
    const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    const keys = yield* KeysStore
    yield* keys.insertAccount({
      id: accountId,
      email: `${agentId}@model.invalid`,
      name,
      passwordHash: "disabled",
      planId: null,
      createdAt
    })
    yield* keys.insertAgent(Agent.make({ id: agentId, accountId, name, organization: null, createdAt }))
    // The model's parties start unlimited (model.ts DEFAULT_POLICY): set so, not the new agent's defaults.
    yield* unlimitedWallet(agentId)
    const caller = agentCaller(agentId, accountId)
    const service = yield* Effect.flatMap(Catalog, (c) =>
      c.publish(caller, serviceBody(name, tiers, category, { mode: "pull" }))
    )
    return { agentId, service, caller }
  })

// ---- answers, reduced to what the model can know ----------------------------------------------------

export type Actual =
  | M.Outcome
  | { readonly _tag: "unavailable" }
  | {
      readonly _tag: "sagaRun"
      readonly sagaId: string
      readonly status: M.Saga["status"]
      readonly price: number | null
      readonly txId: string | null
      readonly reason: string | null
    }

export const fromPurchase = (p: {
  readonly status: string
  readonly transaction: { readonly id: string; readonly priceCents: number } | null
  readonly approval: { readonly id: string; readonly reason: string } | null
}): Actual =>
  p.status === "pending_approval"
    ? { _tag: "pending", reason: p.approval!.reason as "manual", approvalId: p.approval!.id }
    : p.status === "pending"
      ? { _tag: "ordered", price: p.transaction!.priceCents, txId: p.transaction!.id }
      : p.status === "failed"
        ? { _tag: "failed", txId: p.transaction!.id }
        : { _tag: "completed", price: p.transaction!.priceCents, txId: p.transaction!.id }

export const fromSaga = (g: {
  readonly id: string
  readonly status: string
  readonly priceCents: number | null
  readonly transactionId: string | null
  readonly failure: { readonly reason: string } | null
}): Actual => ({
  _tag: "sagaRun",
  sagaId: g.id,
  status: g.status as M.Saga["status"],
  price: g.priceCents,
  txId: g.transactionId,
  reason: g.failure?.reason ?? null
})

export const fromError = (e: unknown): Actual => {
  const err = e as {
    readonly _tag: string
    readonly policy?: string
    readonly state?: string
    readonly status?: string
  }
  if (err._tag === "StorageUnavailable") return { _tag: "unavailable" }
  // An answer to a closed order names the state the order ended in.
  const state = err._tag === "OrderClosed" ? err.status : err.state
  return {
    _tag: "refused",
    error: err._tag,
    ...(err.policy !== undefined ? { policy: err.policy } : {}),
    ...(state !== undefined ? { state } : {})
  }
}

/** A saga compensated for a policy names the policy in its failure reason (P1). */
const POLICIES = new Set(["allowedSellers", "allowedCategories", "perTransactionLimit", "dailyLimit", "monthlyLimit"])

export const matches = (expected: M.Outcome, actual: Actual): boolean => {
  switch (expected._tag) {
    case "completed":
      return actual._tag === "completed" && actual.price === expected.price
    case "failed":
      return actual._tag === "failed"
    case "pending":
      return actual._tag === "pending" && actual.reason === expected.reason
    case "replayTx":
      return (
        (actual._tag === "completed" || actual._tag === "failed" || actual._tag === "ordered") &&
        actual.txId === expected.txId
      )
    case "ordered":
      return actual._tag === "ordered" && actual.price === expected.price
    case "answered":
      return (
        actual._tag === "answered" &&
        actual.status === expected.status &&
        JSON.stringify(actual.output) === JSON.stringify(expected.output)
      )
    case "expired":
      return actual._tag === "expired" && actual.count === expected.count
    case "replayApproval":
      return actual._tag === "pending" && actual.approvalId === expected.approvalId
    case "refused":
      return (
        actual._tag === "refused" &&
        actual.error === expected.error &&
        (expected.policy === undefined || actual.policy === expected.policy) &&
        (expected.state === undefined || actual.state === expected.state)
      )
    case "saga":
      if (actual._tag !== "sagaRun" || actual.status !== expected.status) return false
      if (expected.status !== "compensated") return actual.price === expected.price
      return expected.why === undefined || !POLICIES.has(expected.why) || (actual.reason ?? "").includes(expected.why)
    case "ok":
      return actual._tag === "ok"
  }
}

export const idsOf = (a: Actual) =>
  a._tag === "sagaRun"
    ? { sagaId: a.sagaId, txId: a.txId ?? undefined }
    : { txId: "txId" in a ? a.txId : undefined, approvalId: "approvalId" in a ? a.approvalId : undefined }

export const label = (a: Actual) =>
  a._tag === "refused"
    ? `refused:${a.error}${"policy" in a && a.policy ? `:${a.policy}` : ""}${"state" in a && a.state ? `:${a.state}` : ""}`
    : a._tag === "sagaRun"
      ? `saga ${a.status}`
      : a._tag === "answered"
        ? `${a.status}`
        : a._tag

export class Divergence extends Error {}
export const diverge = (what: string, detail: unknown) => new Divergence(`${what}: ${JSON.stringify(detail)}`)
