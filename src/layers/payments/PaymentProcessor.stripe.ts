// The Stripe payment processor (PAYMENTS=stripe) over the official `stripe` SDK, API version
// pinned; STRIPE_API_BASE points it elsewhere (a local stub in tests).
import { traced } from "../../services/platform/Tracing.js"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import type StripeSdk from "stripe"
import { NotFound } from "../../schema/platform/errors.js"
import { ProcessorUnavailable } from "../../schema/payments/payments.js"
import { FakeCheckout } from "../../services/payments/FakeCheckout.js"
import { PaymentProcessor } from "../../services/payments/PaymentProcessor.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { STRIPE_API_VERSION, toProcessorSession, verifyAndParse } from "./stripeFormat.js"

/** SDK options for a base address such as `http://127.0.0.1:12111` (host, port, protocol). */
export const baseAddressOptions = (apiBase: string): { host: string; port: number; protocol: "http" | "https" } => {
  const url = new URL(apiBase)
  const protocol = url.protocol === "http:" ? "http" : "https"
  return { host: url.hostname, port: url.port ? Number(url.port) : protocol === "https" ? 443 : 80, protocol }
}

const describeWith =
  (Stripe: typeof StripeSdk) =>
  (e: unknown): { readonly status: number | undefined; readonly message: string } => {
    if (e instanceof Stripe.errors.StripeError)
      return { status: e.statusCode, message: `${e.type}${e.code ? ` (${e.code})` : ""}: ${e.message}` }
    return { status: undefined, message: e instanceof Error ? e.message : String(e) }
  }

/** Under PAYMENTS=stripe there is no fake hosted page: every fake-page route answers 404. */
const noFakePage = (id: string) =>
  Effect.fail(
    new NotFound({
      message: `checkout session ${id} not found (the fake processor is off)`,
      resource: "checkoutSession",
      id
    })
  )
export const FakeCheckoutDisabled = FakeCheckout.of({
  enabled: false,
  view: noFakePage,
  pay: noFakePage,
  cancel: noFakePage,
  renew: noFakePage,
  deliveries: noFakePage
})

export const StripeProcessorLive = Layer.effectContext(
  Effect.gen(function* () {
    const config = yield* AppConfig
    // loadConfig refuses PAYMENTS=stripe without both secrets; a test config without them is a bug.
    const secretKey = Redacted.value(
      Option.getOrThrowWith(
        config.stripeSecretKey,
        () => new Error("STRIPE_SECRET_KEY is required when PAYMENTS=stripe")
      )
    )
    const webhookSecret = Redacted.value(
      Option.getOrThrowWith(
        config.stripeWebhookSecret,
        () => new Error("STRIPE_WEBHOOK_SECRET is required when PAYMENTS=stripe")
      )
    )
    // The SDK is loaded only under PAYMENTS=stripe: a large module a fake-payments server never needs.
    const Stripe = (yield* Effect.promise(() => import("stripe"))).default
    const describe = describeWith(Stripe)
    const unavailable = (what: string) => (e: unknown) =>
      new ProcessorUnavailable({ message: `the payment processor ${what}: ${describe(e).message}` })
    const client = new Stripe(secretKey, {
      apiVersion: STRIPE_API_VERSION,
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: "agent-commerce", version: "1.0.0" },
      ...Option.match(config.stripeApiBase, { onNone: () => ({}), onSome: baseAddressOptions })
    })

    const processor = PaymentProcessor.of({
      kind: "stripe",
      createCheckoutSession: (request) =>
        Effect.tryPromise({
          try: () =>
            client.checkout.sessions.create(
              {
                mode: request.mode,
                line_items: [
                  {
                    quantity: 1,
                    price_data: {
                      currency: request.currency,
                      unit_amount: request.amountCents,
                      product_data: { name: request.description },
                      ...(request.mode === "subscription" ? { recurring: { interval: "month" as const } } : {})
                    }
                  }
                ],
                success_url: request.successUrl,
                cancel_url: request.cancelUrl,
                metadata: { ...request.metadata },
                ...(request.customerEmail ? { customer_email: request.customerEmail } : {}),
                // Copies of the metadata on what the session creates, so renewals and refunds carry it.
                ...(request.mode === "subscription"
                  ? { subscription_data: { metadata: { ...request.metadata } } }
                  : { payment_intent_data: { metadata: { ...request.metadata } } })
              },
              { idempotencyKey: request.idempotencyKey }
            ),
          catch: unavailable("refused to create the checkout session")
        }).pipe(
          Effect.flatMap((session) =>
            session.url
              ? Effect.succeed({ sessionId: session.id, checkoutUrl: session.url })
              : Effect.fail(
                  new ProcessorUnavailable({
                    message: `the payment processor returned session ${session.id} without a checkout address`
                  })
                )
          ),
          traced("Stripe.checkout.sessions.create")
        ),
      retrieveSession: (id) =>
        Effect.tryPromise({
          try: () => client.checkout.sessions.retrieve(id),
          catch: (e) =>
            describe(e).status === 404
              ? new NotFound({
                  message: `checkout session ${id} not found at the payment processor`,
                  resource: "checkoutSession",
                  id
                })
              : unavailable("did not return the checkout session")(e)
        }).pipe(
          Effect.map((session) => toProcessorSession(session as unknown as Record<string, unknown>)),
          traced("Stripe.checkout.sessions.retrieve")
        ),
      verifyEvent: (rawBody, header) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          verifyAndParse({ payload: rawBody, header, secret: webhookSecret, nowSeconds: Math.floor(now / 1000) })
        )
    })
    return Context.make(PaymentProcessor, processor).pipe(Context.add(FakeCheckout, FakeCheckoutDisabled))
  })
)
