// Acquisitions of catalog projects: a checkout and a pending acquisition that the payment makes
// paid, and the agent's acquisitions as keyset pages (GET /portfolio).
import { Effect } from "effect"
import { traced } from "../platform/Tracing.js"
import { Conflict, InvalidInput } from "../../schema/platform/errors.js"
import { Acquisition, AcquisitionCheckout } from "../../schema/payments/payments.js"
import { cents, decodeCursor, encodeCursor } from "../../schema/platform/common.js"
import type { Caller } from "../keys/Caller.js"
import { Ids } from "../platform/Db.js"
import { type CheckoutIdempotency, DEFAULT_ACQUISITIONS_LIMIT } from "./checkout.js"
import type { OpenCheckout } from "./openCheckout.js"
import { PaymentsStore } from "./PaymentsStore.js"

export const makeAcquisitions = Effect.fnUntraced(function* (openCheckout: OpenCheckout) {
  const store = yield* PaymentsStore
  const ids = yield* Ids

  const startAcquisition = Effect.fnUntraced(function* (
    input: {
      readonly caller: Caller
      readonly projectId: string
      readonly priceCents: number
      readonly title: string
    },
    idempotency?: CheckoutIdempotency
  ) {
    const agentId = input.caller.agentId
    if (agentId === undefined) {
      const message = "agentId: projects are acquired by an agent (use its API key)"
      return yield* Effect.fail(new InvalidInput({ message, field: "agentId" }))
    }
    if (!Number.isSafeInteger(input.priceCents) || input.priceCents < 1) {
      const message = `priceCents: must be a positive integer, got ${input.priceCents}`
      return yield* Effect.fail(new InvalidInput({ message, field: "priceCents" }))
    }
    const owned = yield* store.findPaidAcquisition(agentId, input.projectId)
    if (owned) {
      const message = `project ${input.projectId} is already in this agent's portfolio (acquisition ${owned.id})`
      return yield* Effect.fail(new Conflict({ message, state: "paid" }))
    }
    const acquisitionId = yield* ids.make("acq")
    const checkout = yield* openCheckout(
      {
        purpose: "acquisition",
        mode: "payment",
        amountCents: input.priceCents,
        currency: "usd",
        description: `Acquisition of project "${input.title}"`,
        accountId: input.caller.accountId,
        agentId,
        acquisitionId,
        credits: 0,
        scope: `${agentId}|${input.projectId}`
      },
      idempotency,
      (c) =>
        store.insertAcquisition(
          Acquisition.make({
            id: acquisitionId,
            agentId,
            accountId: input.caller.accountId,
            projectId: input.projectId,
            title: input.title,
            priceCents: cents(input.priceCents),
            currency: "usd",
            status: "pending",
            checkoutSessionId: c.sessionId,
            checkoutUrl: c.checkoutUrl,
            createdAt: c.createdAt,
            paidAt: null
          })
        )
    )
    return AcquisitionCheckout.make({
      acquisitionId: checkout.acquisitionId ?? acquisitionId,
      projectId: input.projectId,
      priceCents: cents(input.priceCents),
      checkoutUrl: checkout.checkoutUrl,
      sessionId: checkout.sessionId
    })
  }, traced("Payments.startAcquisition"))

  const listAcquisitions = Effect.fnUntraced(function* (
    agentId: string,
    options: { readonly limit?: number; readonly cursor?: string } = {}
  ) {
    const limit = options.limit ?? DEFAULT_ACQUISITIONS_LIMIT
    let beforeId: string | undefined
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor) as { q?: unknown } | undefined
      if (!c || typeof c.q !== "string") {
        return yield* Effect.fail(new InvalidInput({ message: "cursor is not valid", field: "cursor" }))
      }
      beforeId = c.q
    }
    const rows = yield* store.listAcquisitions(agentId, { limit: limit + 1, beforeId })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return { data: page, nextCursor: rows.length > limit && last ? encodeCursor({ q: last.id }) : null }
  })

  return { startAcquisition, listAcquisitions } as const
})
