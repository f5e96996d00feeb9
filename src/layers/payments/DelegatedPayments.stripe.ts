// Delegated payments at Stripe (PAYMENTS=stripe): a Shared Payment Token is charged by a
// PaymentIntent confirmed at once (`shared_payment_granted_token`), refunded with a Refund.
// Tested against the local Stripe stand-in (test/fixtures/stripeStub.ts) with this SDK on the wire
// (test/http/acp.test.ts, "the card paid through Stripe"); not against Stripe itself (docs/acp.md).
import { Effect, Layer, Option, Redacted } from "effect"
import { CardDeclined, ProcessorUnavailable } from "../../schema/payments/payments.js"
import { DelegatedPayments } from "../../services/payments/DelegatedPayments.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { baseAddressOptions } from "./PaymentProcessor.stripe.js"
import { STRIPE_API_VERSION } from "./stripeFormat.js"

export const StripeDelegatedPaymentsLive = Layer.effect(
  DelegatedPayments,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const secretKey = Redacted.value(
      Option.getOrThrowWith(
        config.stripeSecretKey,
        () => new Error("STRIPE_SECRET_KEY is required when PAYMENTS=stripe")
      )
    )
    const Stripe = (yield* Effect.promise(() => import("stripe"))).default
    const client = new Stripe(secretKey, {
      apiVersion: STRIPE_API_VERSION,
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: "agent-commerce", version: "1.0.0" },
      ...Option.match(config.stripeApiBase, { onNone: () => ({}), onSome: baseAddressOptions })
    })
    const message = (e: unknown) => (e instanceof Error ? e.message : String(e))
    return DelegatedPayments.of({
      psp: "stripe",
      charge: (request) =>
        Effect.tryPromise({
          try: () =>
            client.paymentIntents.create(
              {
                amount: request.amountCents,
                currency: request.currency,
                confirm: true,
                description: request.description,
                metadata: { ...request.metadata },
                automatic_payment_methods: { enabled: true, allow_redirects: "never" },
                // The Shared Payment Token: not in the SDK's types of this API version.
                ...({ shared_payment_granted_token: request.token } as Record<string, string>)
              },
              { idempotencyKey: request.idempotencyKey }
            ),
          catch: (e) =>
            e instanceof Stripe.errors.StripeCardError
              ? new CardDeclined({ message: `the card was declined: ${message(e)}` })
              : new ProcessorUnavailable({ message: `the payment processor refused the charge: ${message(e)}` })
        }).pipe(
          Effect.flatMap((intent) =>
            intent.status === "succeeded"
              ? Effect.succeed({ chargeId: intent.id })
              : Effect.fail(
                  new CardDeclined({ message: `the payment did not complete at once (status ${intent.status})` })
                )
          )
        ),
      refund: (chargeId, idempotencyKey) =>
        Effect.tryPromise({
          try: () => client.refunds.create({ payment_intent: chargeId }, { idempotencyKey }),
          catch: (e) => new ProcessorUnavailable({ message: `the payment processor refused the refund: ${message(e)}` })
        }).pipe(Effect.asVoid)
    })
  })
)
