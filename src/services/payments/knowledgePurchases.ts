// Knowledge purchases (spec §4.5): a one-off checkout for a knowledge product, where it stands,
// and the product's content to its buyer once paid.
import { Effect } from "effect"
import { traced } from "../platform/Tracing.js"
import { InvalidInput, NotFound } from "../../schema/platform/errors.js"
import { PurchaseStatus } from "../../schema/payments/payments.js"
import { cents } from "../../schema/platform/common.js"
import { KnowledgeContent } from "../../schema/knowledge/knowledge.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import type { CheckoutIdempotency } from "./checkout.js"
import type { OpenCheckout } from "./openCheckout.js"
import { PaymentsStore } from "./PaymentsStore.js"

export const makeKnowledgePurchases = Effect.fnUntraced(function* (openCheckout: OpenCheckout) {
  const store = yield* PaymentsStore
  const knowledge = yield* Knowledge

  const purchaseAccess = Effect.fnUntraced(function* (
    input: {
      readonly serviceId: number
      readonly customerEmail?: string | undefined
      readonly customerName?: string | undefined
    },
    idempotency?: CheckoutIdempotency
  ) {
    const product = yield* knowledge.getProduct(input.serviceId).pipe(
      Effect.catchTag("NotFound", (e) =>
        Effect.fail(
          new NotFound({
            resource: e.resource,
            id: e.id,
            message: `serviceId: knowledge product ${input.serviceId} not found`
          })
        )
      )
    )
    if (!product.isActive) {
      const message = `serviceId: knowledge product ${product.id} is not available for purchase`
      return yield* Effect.fail(new InvalidInput({ message, field: "serviceId" }))
    }
    const email = input.customerEmail?.toLowerCase()
    const checkout = yield* openCheckout(
      {
        purpose: "knowledge",
        mode: "payment",
        amountCents: product.priceInCents,
        currency: product.currency,
        description: product.name,
        accountId: null,
        agentId: null,
        productId: product.id,
        credits: 0,
        customerEmail: email,
        customerName: input.customerName,
        scope: `knowledge|${email ?? "-"}|${product.id}`
      },
      idempotency
    )
    return { checkoutUrl: checkout.checkoutUrl, sessionId: checkout.sessionId }
  }, traced("Payments.purchaseAccess"))

  const purchaseStatus = Effect.fnUntraced(function* (sessionId: string) {
    const checkout = yield* store.getCheckout(sessionId)
    if (!checkout || checkout.purpose !== "knowledge" || checkout.productId === null) {
      return yield* Effect.fail(
        new NotFound({ message: `purchase ${sessionId} not found`, resource: "purchase", id: sessionId })
      )
    }
    const access = yield* store.getAccessBySession(sessionId)
    const product = yield* knowledge.getProduct(checkout.productId).pipe(Effect.option)
    return PurchaseStatus.make({
      sessionId,
      status: checkout.status,
      productId: checkout.productId,
      productName: product._tag === "Some" ? product.value.name : checkout.description,
      amountCents: cents(checkout.amountCents),
      currency: checkout.currency,
      ...(access ? { grantedAt: access.grantedAt, accessId: access.id } : {}),
      ...(checkout.failureReason ? { failureReason: checkout.failureReason } : {})
    })
  })

  const accessContent = Effect.fnUntraced(function* (accessId: string, sessionId: string) {
    const notFound = new NotFound({
      message: `access ${accessId} not found for this checkout session`,
      resource: "knowledgeAccess",
      id: accessId
    })
    const access = yield* store.getAccessBySession(sessionId)
    if (!access || access.id !== accessId) return yield* Effect.fail(notFound)
    const product = yield* knowledge.getProduct(access.productId)
    const delivered = yield* knowledge.deliverableOf(product)
    return KnowledgeContent.make({
      accessId: access.id,
      productId: product.id,
      productName: product.name,
      format: delivered.format,
      language: "pt-BR",
      grantedAt: access.grantedAt,
      sections: delivered.sections,
      disclaimer: delivered.disclaimer
    })
  }, traced("Payments.accessContent"))

  return { purchaseAccess, purchaseStatus, accessContent } as const
})
