// Creating a project: the body checked, the plan's quota, the creation charge and the queued build
// in one unit of work with the request's write receipt (a retry whose answer was lost gets the
// same project, charged once). The build's steps: Builder.ts.
import { Clock, Effect } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"
import { PLATFORM_FEES, walletAccount } from "../../schema/ledger/ledger.js"
import type { CreateProjectBody, FailableStep, Project, ProjectRecord } from "../../schema/projects/builder.js"
import { Events } from "../events/Events.js"
import { type KeyedRequest, WriteReceipts } from "../idempotency/WriteReceipts.js"
import { Ledger } from "../ledger/Ledger.js"
import { Marketplace } from "../marketplace/Marketplace.js"
import { Ids, Transactor } from "../platform/Db.js"
import { traced } from "../platform/Tracing.js"
import { Refusals } from "../refusals/Refusals.js"
import { Wallet } from "../wallet/Wallet.js"
import { BuildStore } from "./BuildStore.js"
import { checkInputs } from "./BuilderInputs.js"
import {
  FAIL_MARKER,
  projectCost,
  type ProjectQuota,
  quotaRefusal,
  STEP_MS,
  stepMessage,
  toProject
} from "./buildRules.js"

/** The create method, given the quota of an account's plan. */
export const makeCreate = Effect.fnUntraced(function* (quotaOf: (accountId: string) => Effect.Effect<ProjectQuota>) {
  const store = yield* BuildStore
  const ledger = yield* Ledger
  const wallet = yield* Wallet
  const events = yield* Events
  const marketplace = yield* Marketplace
  const ids = yield* Ids
  const { atomically } = yield* Transactor
  const refusals = yield* Refusals
  const receipts = yield* WriteReceipts

  /** A committed project, for the retry of the request that made it. */
  const projectOf = (id: string) =>
    Effect.flatMap(store.get(id), (r) =>
      r ? Effect.succeed(toProject(r)) : Effect.die(new Error(`project ${id} has a receipt but no row`))
    )

  const create = Effect.fnUntraced(function* (
    owner: { readonly accountId: string; readonly agentId: string },
    body: CreateProjectBody,
    keyed?: KeyedRequest
  ) {
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

  return create
})
