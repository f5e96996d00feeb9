// What a checkout is made of, before and after the processor call: the processor's idempotency
// key, the session metadata, our stored record, and the amount rules. Pure: no service, no I/O.
import { createHash } from "node:crypto"
import { InvalidInput } from "../../schema/platform/errors.js"
import type { Plan } from "../../schema/marketplace/marketplace.js"
import {
  type CheckoutMode,
  type CheckoutPurpose,
  type CheckoutRecord,
  RECHARGE_MAX_CENTS,
  RECHARGE_MIN_CENTS
} from "../../schema/payments/payments.js"

/** GET /portfolio's acquisitions page when no `limit` is given (at most 100). */
export const DEFAULT_ACQUISITIONS_LIMIT = 50

/**
 * The request's Idempotency-Key (undefined without one) and whose it is (its scope): read by the
 * HTTP layer and handed to the service, which passes a key derived from both to the processor.
 */
export interface CheckoutIdempotency {
  readonly key: string | undefined
  readonly scope: string
}

export interface NewCheckout {
  readonly purpose: CheckoutPurpose
  readonly mode: CheckoutMode
  readonly amountCents: number
  readonly currency: string
  readonly description: string
  readonly accountId: string | null
  readonly agentId: string | null
  readonly planId?: string
  readonly productId?: number
  readonly acquisitionId?: string
  readonly credits: number
  readonly customerEmail?: string
  readonly customerName?: string
  /** Who asks: scopes the request's Idempotency-Key before it goes to the processor. */
  readonly scope: string
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")

/**
 * The processor's idempotency key for a keyed request (undefined without a key: the caller uses a
 * fresh id). The caller's key scope is in it too: two anonymous buyers using the same key get
 * their own sessions.
 */
export const processorIdempotencyKey = (input: NewCheckout, idempotency: CheckoutIdempotency): string | undefined =>
  idempotency.key === undefined
    ? undefined
    : `ck_${sha256(`${input.purpose}|${input.scope}|${idempotency.scope}|${idempotency.key}`).slice(0, 40)}`

/** The processor session's metadata: what the checkout is for, read back from its events. */
export const checkoutMetadata = (input: NewCheckout): Record<string, string> => {
  const metadata: Record<string, string> = { purpose: input.purpose }
  if (input.accountId) metadata.account_id = input.accountId
  if (input.agentId) metadata.agent_id = input.agentId
  if (input.planId) metadata.plan_id = input.planId
  if (input.productId !== undefined) metadata.product_id = String(input.productId)
  if (input.acquisitionId) metadata.acquisition_id = input.acquisitionId
  return metadata
}

/** Our pending record of a session the processor opened. */
export const pendingCheckout = (
  input: NewCheckout,
  session: { readonly sessionId: string; readonly checkoutUrl: string },
  createdAt: string
): CheckoutRecord => ({
  sessionId: session.sessionId,
  purpose: input.purpose,
  mode: input.mode,
  status: "pending",
  amountCents: input.amountCents,
  currency: input.currency,
  description: input.description,
  checkoutUrl: session.checkoutUrl,
  accountId: input.accountId,
  agentId: input.agentId,
  planId: input.planId ?? null,
  productId: input.productId ?? null,
  acquisitionId: input.acquisitionId ?? null,
  credits: input.credits,
  customerEmail: input.customerEmail ?? null,
  customerName: input.customerName ?? null,
  subscriptionId: null,
  failureReason: null,
  createdAt,
  completedAt: null
})

/** What the processor's page says a plan checkout buys. */
export const planDescription = (plan: Plan) => {
  const projects = plan.max_projects === "unlimited" ? "unlimited" : plan.max_projects
  const plural = plan.max_projects === 1 ? "" : "s"
  return `${plan.name} plan: ${plan.credits} credits per month, ${projects} project${plural}`
}

/** Why a recharge amount is refused, if it is. */
export const rechargeAmountProblem = (amountCents: number): InvalidInput | undefined =>
  !Number.isSafeInteger(amountCents) || amountCents < RECHARGE_MIN_CENTS || amountCents > RECHARGE_MAX_CENTS
    ? new InvalidInput({
        message: `amountCents: a recharge is ${RECHARGE_MIN_CENTS} to ${RECHARGE_MAX_CENTS} cents, got ${amountCents}`,
        field: "amountCents"
      })
    : undefined

/** A checkout's public view for the return pages (no account or agent ids). */
export const publicCheckoutView = (c: CheckoutRecord) => ({
  sessionId: c.sessionId,
  purpose: c.purpose,
  status: c.status,
  description: c.description,
  amountCents: c.amountCents,
  currency: c.currency,
  failureReason: c.failureReason
})
export type PublicCheckoutView = ReturnType<typeof publicCheckoutView>
