// The saga's pure rules beside the service: the driver's lease and the worker's pace, which step
// is current, and the API's view of a stored row.
import { splitSettlement } from "../../schema/ledger/ledger.js"
import type { Order } from "../../schema/orders/orders.js"
import { NotFound } from "../../schema/platform/errors.js"
import { Saga, type SagaRecord, type SagaStep, type SagaStepName } from "../../schema/saga/saga.js"

/**
 * A driver (the request that started the saga, or a worker) holds a saga for this long between
 * steps; when it dies, another process takes the saga over once the lease has run out.
 */
export const SAGA_LEASE_MS = 5_000
/** How often the worker looks for due sagas, and how many it claims per pass. */
export const SAGA_TICK_MS = 250
export const SAGA_BATCH = 20
/** A page of an agent's sagas (Sagas.list): its default and its most. */
export const SAGA_PAGE_MAX = 100

export const iso = (ms: number) => new Date(ms).toISOString()

/**
 * What one `advance` did: moved a step (or finished), or found the saga waiting on a timer. When
 * the wallet refused the purchase, `refusal` is its error, for the owner's record of refusals
 * (written after the step's unit of work, which commits the saga's failure). `placed`: the order
 * the deliver step placed with the seller, announced to this process's waiters once committed.
 */
export type Advanced = {
  readonly record: SagaRecord
  readonly moved: boolean
  readonly refusal?: unknown
  readonly placed?: Pick<Order, "id" | "sellerAgentId">
  /** The deliver step's order is pending past its deadline: the driver expires it (own unit of work), then steps again. */
  readonly expire?: string
}

/** The index of the step to run next (pending or running), -1 when every step is done. */
export const currentIndex = (r: SagaRecord) =>
  r.steps.findIndex((s) => s.status === "pending" || s.status === "running")

export const setStep = (steps: ReadonlyArray<SagaStep>, name: SagaStepName, patch: Partial<SagaStep>) =>
  steps.map((s) => (s.name === name ? { ...s, ...patch } : s))

export const toSaga = (r: SagaRecord): Saga => {
  const i = currentIndex(r)
  const settled = r.steps.find((s) => s.name === "settle")?.status === "succeeded"
  const split = settled && r.priceCents !== null ? splitSettlement(r.priceCents) : undefined
  return Saga.make({
    id: r.id,
    status: r.status,
    serviceId: r.serviceId,
    tierId: r.tierId,
    sellerAgentId: r.sellerAgentId,
    negotiationId: r.negotiationId,
    priceCents: r.priceCents as Saga["priceCents"],
    transactionId: r.transactionId,
    currentStep: r.status === "running" && i >= 0 ? r.steps[i].name : null,
    steps: [...r.steps],
    failure: r.failure,
    settlement: split
      ? ({ priceCents: r.priceCents!, sellerCents: split.sellerCents, feeCents: split.feeCents } as Saga["settlement"])
      : null,
    output: r.output ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt
  })
}

export const notFound = (id: string) => new NotFound({ message: `saga ${id} not found`, resource: "saga", id })
