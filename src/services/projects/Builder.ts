// Builder: creates projects (template or description plus checked inputs) within the plan's
// project quota, charges credits through the ledger, and runs the simulated build as a durable
// state machine queued → analyzing → generating → building → deploying → live (or failed),
// advanced by a background worker that claims due builds.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.js"
import { InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { PLATFORM_FEES, walletAccount } from "../../schema/ledger/ledger.js"
import {
  Build,
  type BuildStatus,
  buildSteps,
  type CreateProjectBody,
  type FailableStep,
  Project,
  ProjectQuotaExceeded,
  type ProjectRecord
} from "../../schema/projects/builder.js"
import { checkInputs } from "./BuilderInputs.js"
import { atomically, Ids } from "../platform/Db.js"
import { Events } from "../events/Events.js"
import { Keys } from "../keys/Keys.js"
import { Wallet } from "../wallet/Wallet.js"
import { Ledger } from "../ledger/Ledger.js"
import { Marketplace } from "../marketplace/Marketplace.js"

/** Storage port for builder projects (one row per project, its build state included). */
export class BuildStore extends Context.Service<
  BuildStore,
  {
    /** Serialises project creation per account for this unit of work (quota check then insert). */
    readonly lockAccount: (accountId: string) => Effect.Effect<void, StorageUnavailable>
    /** Projects of the account that count against the quota (every build not failed). */
    readonly countActive: (accountId: string) => Effect.Effect<number, StorageUnavailable>
    readonly insert: (record: ProjectRecord) => Effect.Effect<void, StorageUnavailable>
    readonly get: (id: string) => Effect.Effect<ProjectRecord | undefined, StorageUnavailable>
    /** The row, locked for this unit of work. */
    readonly getForUpdate: (id: string) => Effect.Effect<ProjectRecord | undefined, StorageUnavailable>
    readonly update: (record: ProjectRecord) => Effect.Effect<void, StorageUnavailable>
    /**
     * Up to `limit` builds due at `now` (nextRunAt ≤ now), oldest first, locked for this unit of
     * work; rows another worker holds are skipped (Postgres: FOR UPDATE SKIP LOCKED).
     */
    readonly claimDue: (now: string, limit: number) => Effect.Effect<ReadonlyArray<ProjectRecord>, StorageUnavailable>
  }
>()("BuildStore") {}

/** Credits (1 credit = 1 cent) charged per project: a base price plus a price per input. */
export const PROJECT_BASE_COST_CENTS = 100
export const PROJECT_INPUT_COST_CENTS = 20
export const projectCost = (inputCount: number) => PROJECT_BASE_COST_CENTS + PROJECT_INPUT_COST_CENTS * inputCount

/** Projects allowed without a paid plan (the same as Starter). */
export const NO_PLAN_PROJECT_LIMIT = 1

/** Simulated duration of each build step, and how often the worker looks for due builds. */
export const STEP_MS = 500
export const WORKER_TICK_MS = 200
export const WORKER_BATCH = 25

export const progressOf = (status: BuildStatus, previous: number): number =>
  status === "failed" ? previous : buildSteps.indexOf(status) * 20

const FAIL_MARKER = /\[fail:(analyzing|generating|building|deploying)\]/

export const toProject = (r: ProjectRecord): Project =>
  Project.make({
    id: r.id,
    name: r.name,
    description: r.description,
    templateId: r.templateId,
    ownerAgentId: r.agentId,
    inputs: [...r.inputs],
    costCents: r.costCents as Project["costCents"],
    build: Build.make({
      status: r.status,
      progressPercent: r.progressPercent,
      steps: [...r.steps],
      failureReason: r.failureReason,
      startedAt: r.createdAt,
      updatedAt: r.updatedAt,
      finishedAt: r.finishedAt,
      simulated: true
    }),
    createdAt: r.createdAt
  })

const stepMessage = (r: ProjectRecord, status: BuildStatus): string => {
  switch (status) {
    case "queued":
      return `Queued: ${r.templateId ? `from template ${r.templateId}` : "from a description"}, ${r.inputs.length} input${r.inputs.length === 1 ? "" : "s"}`
    case "analyzing":
      return r.inputs.length > 0
        ? `Analyzing ${r.description ? "the description and " : ""}${r.inputs.map((i) => i.detected).join("; ")}`
        : `Analyzing ${r.description ? "the description" : "the template"}`
    case "generating":
      return "Generating the application from the template and the analysis"
    case "building":
      return "Building and running the generated test suite"
    case "deploying":
      return "Deploying to the simulated hosting environment"
    case "live":
      return "Live (simulated deployment)"
    case "failed":
      return r.failureReason ?? "failed"
  }
}

export class Builder extends Context.Service<Builder>()("Builder", {
  make: Effect.gen(function* () {
    const store = yield* BuildStore
    const ledger = yield* Ledger
    const wallet = yield* Wallet
    const events = yield* Events
    const keys = yield* Keys
    const marketplace = yield* Marketplace
    const ids = yield* Ids

    /** The project quota of the account's plan (a number, or "unlimited"). */
    const quotaOf = Effect.fnUntraced(function* (accountId: string) {
      const account = yield* keys.getAccount(accountId).pipe(Effect.orDie)
      if (account.planId === null) return { planId: null, limit: NO_PLAN_PROJECT_LIMIT as number | "unlimited" }
      const plan = yield* marketplace.getPlan(account.planId).pipe(Effect.orDie)
      return { planId: plan.id as string | null, planName: plan.name, limit: plan.max_projects }
    })

    const create = Effect.fnUntraced(function* (owner: { readonly accountId: string; readonly agentId: string }, body: CreateProjectBody) {
      const inputs = checkInputs(body.inputs ?? [])
      if (inputs instanceof InvalidInput) return yield* Effect.fail(inputs)
      const description = body.description?.trim() ? body.description.trim() : null
      if (body.templateId === undefined && (description === null || description.length < 10)) {
        return yield* Effect.fail(
          new InvalidInput({ message: "give a templateId, or a description of at least 10 characters", field: "description" })
        )
      }
      if (body.templateId !== undefined) {
        yield* marketplace.getTemplate(body.templateId).pipe(
          Effect.catchTag("NotFound", () =>
            Effect.fail(new InvalidInput({ message: `templateId: no template "${body.templateId}"`, field: "templateId" }))
          )
        )
      }
      const failAt: FailableStep | null = body.simulateFailure ?? ((FAIL_MARKER.exec(description ?? "")?.[1] as FailableStep | undefined) ?? null)
      const cost = projectCost(inputs.length)
      return yield* atomically(
        Effect.gen(function* () {
          yield* store.lockAccount(owner.accountId)
          const quota = yield* quotaOf(owner.accountId)
          const used = yield* store.countActive(owner.accountId)
          if (quota.limit !== "unlimited" && used >= quota.limit) {
            const planName = quota.planId === null ? "no paid plan" : `the ${quota.planName} plan`
            return yield* Effect.fail(
              new ProjectQuotaExceeded({
                message: `${planName} allows ${quota.limit} project${quota.limit === 1 ? "" : "s"} and this account has ${used}; upgrade the plan to create more`,
                planId: quota.planId,
                limit: quota.limit,
                used
              })
            )
          }
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
          const record: ProjectRecord = { ...draft, steps: [{ status: "queued", at, message: stepMessage(draft, "queued") }] }
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
      const withStep: ProjectRecord = { ...updated, steps: [...r.steps, { status: next, at, message: stepMessage(updated, next) }] }
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
    const advance = Effect.fnUntraced(function* (projectId: string) {
        const r = yield* store.getForUpdate(projectId)
        if (!r) return yield* Effect.fail(new NotFound({ message: `project ${projectId} not found`, resource: "project", id: projectId }))
        return toProject(yield* step(r))
      }, atomically, traced("Builder.advance"))

    /** Claims the builds that are due and advances each by one step; returns how many moved. */
    const runOnce = Effect.fnUntraced(function* (limit: number = WORKER_BATCH) {
        const now = yield* Clock.currentTimeMillis
        const due = yield* store.claimDue(new Date(now).toISOString(), limit)
        for (const r of due) yield* step(r)
        return due.length
      }, atomically, traced("Builder.runOnce"))

    /** The project and its build, for its owner agent only (404 for anyone else). */
    const status = (agentId: string, projectId: string) =>
      Effect.flatMap(store.get(projectId), (r) =>
        r && r.agentId === agentId
          ? Effect.succeed(toProject(r))
          : Effect.fail(new NotFound({ message: `project ${projectId} not found`, resource: "project", id: projectId }))
      )

    return { create, advance, runOnce, status, quotaOf } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Builder, Builder.make).pipe(Layer.provide([Events.layer, Keys.layer, Ledger.layer, Marketplace.layer, Wallet.layer]))
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
      Effect.catchCause((cause) => Effect.logWarning("builder worker: a pass failed; retrying", cause).pipe(Effect.as(0))),
      Effect.flatMap((moved) => (moved >= WORKER_BATCH ? Effect.void : Effect.sleep(Duration.millis(WORKER_TICK_MS)))),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
  })
)
