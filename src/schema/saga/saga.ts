// The five-step purchase saga (quote → escrow → deliver → settle → confirm): step and saga states,
// the recovery rule of each step, the stored row and the API shapes.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"

/** Spec §3 names escrow, deliver, settle in that order; quote and confirm are ours (docs/saga.md). */
export const sagaSteps = ["quote", "escrow", "deliver", "settle", "confirm"] as const
export const SagaStepName = Schema.Literals(sagaSteps)
export type SagaStepName = typeof SagaStepName.Type

export const StepStatus = Schema.Literals(["pending", "running", "succeeded", "failed", "compensated", "skipped"])
export type StepStatus = typeof StepStatus.Type

/** running while steps execute; it ends completed or compensated, never anything else. */
export const SagaStatus = Schema.Literals(["running", "completed", "compensated"])
export type SagaStatus = typeof SagaStatus.Type

/**
 * What a restarted worker does with a saga found at each step (docs/saga.md): before the pivot
 * (settle) an interrupted step is retried or, once it has failed or timed out, compensated;
 * from settle on the saga only moves forward.
 */
export const recoveryRule: Record<
  SagaStepName,
  "retry, else compensate" | "retry until deadline, else compensate" | "forward only"
> = {
  quote: "retry, else compensate",
  escrow: "retry, else compensate",
  deliver: "retry until deadline, else compensate",
  settle: "forward only",
  confirm: "forward only"
}

/** Simulated seller behaviour for the deliver step, chosen by the buyer's input (tests) or the service. */
export const DeliveryMode = Schema.Literals(["ok", "fail", "timeout", "slow"])
export type DeliveryMode = typeof DeliveryMode.Type

export const SagaStep = Schema.Struct({
  name: SagaStepName,
  status: StepStatus,
  startedAt: Schema.NullOr(Timestamp),
  finishedAt: Schema.NullOr(Timestamp),
  compensatedAt: Schema.NullOr(Timestamp),
  detail: Schema.NullOr(Schema.String)
})
export type SagaStep = typeof SagaStep.Type

export const SagaFailure = Schema.Struct({ step: SagaStepName, reason: Schema.String })

export const Settlement = Schema.Struct({ priceCents: Cents, sellerCents: Cents, feeCents: Cents })

/** What the quote step saw of the service, kept for the transaction record (the listing may change later). */
export interface SagaSnapshot {
  readonly serviceName: string
  readonly category: string
  readonly pricingModel: "per_call" | "monthly" | "usage_based" | "tiered"
  readonly listPriceCents: number
  /** The tier's promise at the quote (absent on sagas quoted before promises were kept). */
  readonly promise?: { readonly p95LatencyMs: number; readonly uptimePct: number }
  /** Set by deliver when the seller answered: the delivery latency (the seller's order's, or simulated). */
  readonly deliveryLatencyMs?: number
}

/** The stored row. */
export interface SagaRecord {
  readonly id: string
  readonly buyerAgentId: string
  readonly accountId: string
  readonly sellerAgentId: string
  readonly serviceId: string
  readonly tierId: string
  readonly input: unknown
  readonly negotiationId: string | null
  readonly priceCents: number | null
  readonly snapshot: SagaSnapshot | null
  /**
   * The commerce transaction recorded by confirm (completed) or by a failed deliver (failed,
   * uncharged). On a real seller it is set when deliver places the order: the order's id, pending
   * until the saga settles or fails it.
   */
  readonly transactionId: string | null
  readonly status: SagaStatus
  readonly steps: ReadonlyArray<SagaStep>
  readonly failure: { readonly step: SagaStepName; readonly reason: string } | null
  readonly output: unknown
  /** When a worker should look at it next (null once terminal). */
  readonly nextRunAt: string | null
  /** deliver: when the seller's answer is due (slow) or the step times out (a real seller: the order's deadline). */
  readonly deliverDueAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly finishedAt: string | null
}

const stepSucceeded = (r: Pick<SagaRecord, "steps">, name: SagaStepName) =>
  r.steps.some((s) => s.name === name && s.status === "succeeded")

/** Whether a running saga holds the buyer's money in escrow: escrow done, settle not yet. */
export const sagaHolds = (r: Pick<SagaRecord, "status" | "steps">): boolean =>
  r.status === "running" && stepSucceeded(r, "escrow") && !stepSucceeded(r, "settle")

export class Saga extends Schema.Class<Saga>("Saga")({
  id: Schema.String,
  status: SagaStatus,
  serviceId: Schema.String,
  tierId: Schema.String,
  sellerAgentId: Schema.String,
  negotiationId: Schema.NullOr(Schema.String),
  /** The quoted price (list, or the negotiated one), once the quote step ran. */
  priceCents: Schema.NullOr(Cents),
  /**
   * The commerce transaction (GET /transactions/:id): completed after confirm, failed when the
   * seller failed; on a real seller, pending from the deliver step on (it is the seller's order's id).
   */
  transactionId: Schema.NullOr(Schema.String),
  /** The step running or next to run (null once terminal). */
  currentStep: Schema.NullOr(SagaStepName),
  steps: Schema.Array(SagaStep),
  failure: Schema.NullOr(SagaFailure),
  settlement: Schema.NullOr(Settlement),
  /** The delivery's output (deliver succeeded): the seller's, or the simulated one of a platform seller. */
  output: Schema.Unknown,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  finishedAt: Schema.NullOr(Timestamp)
}) {}

const Id = Schema.String.pipe(Schema.check(Schema.isMinCodePoints(1)), Schema.check(Schema.isMaxCodePoints(100)))

export const SagaBody = Schema.Struct({
  serviceId: Id,
  tierId: Id,
  /** Passed to the seller. `{"simulate": "fail" | "timeout" | "slow", "delayMs": n}` picks a simulated (platform) seller's behaviour. */
  input: Schema.optional(Schema.Unknown),
  negotiationId: Schema.optional(Id)
})
export type SagaBody = typeof SagaBody.Type
