// Builder: creates projects (template or description plus checked inputs) within the plan's
// project quota, charges credits through the ledger, and runs the simulated build as a durable
// state machine queued → analyzing → generating → building → deploying → live (or failed),
// advanced by a background worker that claims due builds. A creation commits the quota check, the
// charge and the queued build in one unit of work with the request's write receipt (a retry whose
// answer was lost gets the same project, charged once). Pure rules: buildRules.ts, BuilderInputs.ts.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import {
  type IdempotencyKeyReused,
  InvalidInput,
  NotFound,
  type StorageUnavailable
} from "../../schema/platform/errors.js"
import { type InsufficientFunds, PLATFORM_FEES, walletAccount } from "../../schema/ledger/ledger.js"
import type { PolicyViolation } from "../../schema/commerce/wallets.js"
import {
  type BuildStatus,
  buildSteps,
  type CreateProjectBody,
  type FailableStep,
  type Project,
  type ProjectQuotaExceeded,
  type ProjectRecord
} from "../../schema/projects/builder.js"
import {
  FAIL_MARKER,
  NO_PLAN_PROJECT_LIMIT,
  progressOf,
  projectCost,
  type ProjectQuota,
  quotaRefusal,
  STEP_MS,
  stepMessage,
  toProject,
  WORKER_BATCH,
  WORKER_TICK_MS
} from "./buildRules.js"
import { checkInputs } from "./BuilderInputs.js"
import { Refusals } from "../refusals/Refusals.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import { Ids, Transactor } from "../platform/Db.js"
import { BuildStore } from "./BuildStore.js"
import { Events } from "../events/Events.js"
import { Keys } from "../keys/Keys.js"
import { Wallet } from "../wallet/Wallet.js"
import { Ledger } from "../ledger/Ledger.js"
import { Marketplace } from "../marketplace/Marketplace.js"

type Owner = { readonly accountId: string; readonly agentId: string }
type CreateError = InsufficientFunds | InvalidInput | PolicyViolation | ProjectQuotaExceeded | StorageUnavailable

export interface BuilderService {
  /**
   * Creates a project within the plan's quota, charges its credits and queues its build. With the
   * request's Idempotency-Key, at most once per key (docs/idempotency.md "Domain dedupe").
   */
  readonly create: {
    (
      owner: Owner,
      body: CreateProjectBody,
      keyed: KeyedRequest
    ): Effect.Effect<Project, CreateError | IdempotencyKeyReused>
    // Last, so that ReturnType (Sessions' error union) names the keyless call.
    (owner: Owner, body: CreateProjectBody): Effect.Effect<Project, CreateError>
  }
  /** Advances one build by one step now, whatever its schedule (tests and operators). */
  readonly advance: (
    projectId: string
  ) => Effect.Effect<Project, InsufficientFunds | InvalidInput | NotFound | StorageUnavailable>
  /** Claims the builds that are due and advances each by one step; returns how many moved. */
  readonly runOnce: (limit?: number) => Effect.Effect<number, InsufficientFunds | InvalidInput | StorageUnavailable>
  /** The project and its build, for its owner agent only (404 for anyone else). */
  readonly status: (agentId: string, projectId: string) => Effect.Effect<Project, NotFound | StorageUnavailable>
  /** The project quota of the account's plan (a number, or "unlimited"). */
  readonly quotaOf: (accountId: string) => Effect.Effect<ProjectQuota>
}

const make = Effect.gen(function* () {
  const store = yield* BuildStore
  const ledger = yield* Ledger
  const wallet = yield* Wallet
  const events = yield* Events
  const keys = yield* Keys
  const marketplace = yield* Marketplace
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const refusals = yield* Refusals
  const receipts = yield* WriteReceipts

  const projectNotFound = (projectId: string) =>
    new NotFound({ message: `project ${projectId} not found`, resource: "project", id: projectId })

  /** The project quota of the account's plan (a number, or "unlimited"). */
  const quotaOf = Effect.fnUntraced(function* (accountId: string) {
    const account = yield* keys.getAccount(accountId).pipe(Effect.orDie)
    if (account.planId === null) return { planId: null, limit: NO_PLAN_PROJECT_LIMIT as number | "unlimited" }
    const plan = yield* marketplace.getPlan(account.planId).pipe(Effect.orDie)
    return { planId: plan.id as string | null, planName: plan.name, limit: plan.max_projects }
  })

  /** A committed project, for the retry of the request that made it. */
  const projectOf = (id: string) =>
    Effect.flatMap(store.get(id), (r) =>
      r ? Effect.succeed(toProject(r)) : Effect.die(new Error(`project ${id} has a receipt but no row`))
    )

  const create = Effect.fnUntraced(function* (owner: Owner, body: CreateProjectBody, keyed?: KeyedRequest) {
    const inputs = checkInputs(body.inputs ?? [])
    if (inputs instanceof InvalidInput) return yield* Effect.fail(inputs)
    const description = body.description?.trim() ? body.description.trim() : null
    if (body.templateId === undefined && (description === null || description.length < 10)) {
      return yield* Effect.fail(
        new InvalidInput({
          message: "give a templateId, or a description of at least 10 characters",
          field: "description"
        })
      )
    }
    if (body.templateId !== undefined) {
      yield* marketplace
        .getTemplate(body.templateId)
        .pipe(
          Effect.catchTag("NotFound", () =>
            Effect.fail(
              new InvalidInput({ message: `templateId: no template "${body.templateId}"`, field: "templateId" })
            )
          )
        )
    }
    const marked = FAIL_MARKER.exec(description ?? "")?.[1] as FailableStep | undefined
    const failAt: FailableStep | null = body.simulateFailure ?? marked ?? null
    const cost = projectCost(inputs.length)
    const write = atomically(
      Effect.gen(function* () {
        yield* store.lockAccount(owner.accountId)
        const quota = yield* quotaOf(owner.accountId)
        const used = yield* store.countActive(owner.accountId)
        const overQuota = quotaRefusal(quota, used)
        if (overQuota) return yield* Effect.fail(overQuota)
        const now = yield* Clock.currentTimeMillis
        const at = new Date(now).toISOString()
        // The creation charge spends the wallet: the owner's amount limits apply and it counts as spend.
        yield* wallet.debitOutsidePurchase(owner.agentId, cost)
        const id = yield* ids.make("prj")
        yield* ledger.transfer({
          kind: "project_creation",
          reference: id,
          memo: `project ${body.name}`,
          from: walletAccount(owner.agentId),
          to: PLATFORM_FEES,
          amount: cost
        })
        const draft: ProjectRecord = {
          id,
          accountId: owner.accountId,
          agentId: owner.agentId,
          name: body.name,
          description,
          templateId: body.templateId ?? null,
          inputs,
          costCents: cost,
          status: "queued",
          progressPercent: 0,
          steps: [],
          failAt,
          failureReason: null,
          createdAt: at,
          updatedAt: at,
          finishedAt: null,
          nextRunAt: new Date(now + STEP_MS).toISOString()
        }
        const record: ProjectRecord = {
          ...draft,
          steps: [{ status: "queued", at, message: stepMessage(draft, "queued") }]
        }
        yield* store.insert(record)
        yield* events.emit(owner.agentId, "build.status_changed", {
          projectId: id,
          status: "queued",
          previousStatus: null,
          progressPercent: 0,
          failureReason: null
        })
        return toProject(record)
      })
    )
    // A retry whose project committed (its answer lost) gets that project, charged once.
    const once = { keyed, kind: "project.create", request: { owner, body }, write, idOf: (p: Project) => p.id }
    return yield* receipts.once({ ...once, replay: projectOf }).pipe(
      // A creation charge the wallet refused (a limit, the freeze, the balance) is kept for the owner.
      refusals.recordingRefusal({
        agentId: owner.agentId,
        serviceId: null,
        serviceName: `project ${body.name}`,
        tierId: null,
        priceCents: cost,
        path: "build"
      })
    )
  }, traced("Builder.create"))

  /** One transition of a locked row (inside the caller's unit of work); terminal rows are unchanged. */
  const step = Effect.fnUntraced(function* (r: ProjectRecord) {
    if (r.status === "live" || r.status === "failed") return r
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    const failing = r.failAt !== null && r.failAt === r.status
    const next: BuildStatus = failing ? "failed" : buildSteps[buildSteps.indexOf(r.status) + 1]
    const terminal = next === "live" || next === "failed"
    const failureReason = failing ? `the ${r.status} step failed (simulated failure requested for this build)` : null
    const updated: ProjectRecord = {
      ...r,
      status: next,
      progressPercent: progressOf(next, r.progressPercent),
      failureReason,
      updatedAt: at,
      finishedAt: terminal ? at : null,
      nextRunAt: terminal ? null : new Date(now + STEP_MS).toISOString()
    }
    const withStep: ProjectRecord = {
      ...updated,
      steps: [...r.steps, { status: next, at, message: stepMessage(updated, next) }]
    }
    yield* store.update(withStep)
    if (failing && r.costCents > 0) {
      // A failed build costs nothing: the creation charge goes back to the wallet, and off its day's spend.
      yield* wallet.giveBackSpend(r.agentId, r.createdAt, r.costCents)
      yield* ledger.transfer({
        kind: "refund",
        reference: r.id,
        memo: `failed build of ${r.name}`,
        from: PLATFORM_FEES,
        to: walletAccount(r.agentId),
        amount: r.costCents
      })
    }
    yield* events.emit(r.agentId, "build.status_changed", {
      projectId: r.id,
      status: next,
      previousStatus: r.status,
      progressPercent: withStep.progressPercent,
      failureReason
    })
    return withStep
  })

  /** Advances one build by one step now, whatever its schedule (tests and operators). */
  const advance = Effect.fnUntraced(
    function* (projectId: string) {
      const r = yield* store.getForUpdate(projectId)
      if (!r) return yield* Effect.fail(projectNotFound(projectId))
      return toProject(yield* step(r))
    },
    atomically,
    traced("Builder.advance")
  )

  /** Claims the builds that are due and advances each by one step; returns how many moved. */
  const runOnce = Effect.fnUntraced(
    function* (limit: number = WORKER_BATCH) {
      const now = yield* Clock.currentTimeMillis
      const due = yield* store.claimDue(new Date(now).toISOString(), limit)
      for (const r of due) yield* step(r)
      return due.length
    },
    atomically,
    traced("Builder.runOnce")
  )

  /** The project and its build, for its owner agent only (404 for anyone else). */
  const status = (agentId: string, projectId: string) =>
    Effect.flatMap(store.get(projectId), (r) =>
      r && r.agentId === agentId ? Effect.succeed(toProject(r)) : Effect.fail(projectNotFound(projectId))
    )

  // Without a key the receipt is never read, so IdempotencyKeyReused cannot happen (the keyless overload).
  return Builder.of({ create: create as BuilderService["create"], advance, runOnce, status, quotaOf })
})

export class Builder extends Context.Service<Builder, BuilderService>()("agent-commerce/Builder") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Builder, make).pipe(
    Layer.provide([
      Events.layer,
      Keys.layer,
      Ledger.layer,
      Marketplace.layer,
      Wallet.layer,
      Refusals.layer,
      WriteReceipts.layer
    ])
  )
}

/**
 * The build worker: a fiber that runs `Builder.runOnce` every WORKER_TICK_MS (at once again when
 * a full batch was claimed). Runs only when AppConfig.workers; stops with the layer's scope.
 */
export const BuilderWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.workers) return
    const builder = yield* Builder
    const loop = builder.runOnce().pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("builder worker: a pass failed; retrying", cause).pipe(Effect.as(0))
      ),
      Effect.flatMap((moved) => (moved >= WORKER_BATCH ? Effect.void : Effect.sleep(Duration.millis(WORKER_TICK_MS)))),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
  })
)
