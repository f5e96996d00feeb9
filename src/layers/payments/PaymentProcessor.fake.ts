// The fake payment processor (PAYMENTS=fake): sessions kept in our storage, a hosted page at
// {BASE_URL}/checkout/fake/:sessionId, and Stripe-format events signed with a webhook secret.
import { randomBytes } from "node:crypto"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { Conflict, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Ids, Transactor } from "../../services/platform/Db.js"
import { type FakeCheckoutOutcome, FakeCheckout, type FakeRequester } from "../../services/payments/FakeCheckout.js"
import { type FakeDelivery, FakeProcessorStore, type FakeSession } from "../../services/payments/FakeProcessorStore.js"
import { PaymentProcessor } from "../../services/payments/PaymentProcessor.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { ConfigInvalid } from "../config.js"
import {
  checkoutSessionObject,
  eventEnvelope,
  signPayload,
  toProcessorSession,
  verifyAndParse
} from "./stripeFormat.js"

/** An open fake session expires this long after creation (Stripe's default is 24 h). */
export const FAKE_SESSION_TTL_MS = 24 * 3600 * 1000

/**
 * The fake processor's webhook signing secret: STRIPE_WEBHOOK_SECRET when set, else a random one
 * made when the processor layer is built (once per process), so nobody can forge a signed
 * `invoice.paid` with a secret read in the documentation. Several processes sharing one database
 * need the same secret: set STRIPE_WEBHOOK_SECRET.
 */
export const fakeWebhookSecret = (secret: Option.Option<Redacted.Redacted>) =>
  Option.match(secret, { onNone: () => `whsec_${randomBytes(32).toString("base64")}`, onSome: Redacted.value })

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000)

export const FakeProcessorLive = Layer.effectContext(
  Effect.gen(function* () {
    const config = yield* AppConfig
    // The configuration loader refuses this first; this holds for a configuration built in code too.
    if (config.production && !config.fakePaymentsInProduction) {
      return yield* Effect.die(
        new ConfigInvalid(
          "invalid configuration: PAYMENTS=fake in production: the fake processor grants credits without payment; set FAKE_PAYMENTS_IN_PRODUCTION=true to run it anyway"
        )
      )
    }
    const store = yield* FakeProcessorStore
    const ids = yield* Ids
    const { atomically } = yield* Transactor
    const secret = fakeWebhookSecret(config.stripeWebhookSecret)
    const pageUrl = (id: string) => `${config.baseUrl}/checkout/fake/${id}`

    const sessionObject = (s: FakeSession) =>
      checkoutSessionObject({
        id: s.id,
        mode: s.mode,
        status: s.status,
        paymentStatus: s.paymentStatus,
        amountCents: s.amountCents,
        currency: s.currency,
        metadata: s.metadata,
        url: pageUrl(s.id),
        successUrl: s.successUrl,
        cancelUrl: s.cancelUrl,
        customerEmail: s.customerEmail,
        subscriptionId: s.subscriptionId,
        createdSeconds: seconds(s.createdAt),
        expiresSeconds: seconds(s.expiresAt)
      })

    /** Builds, signs and records one event, exactly as Stripe would send it. */
    const emit = Effect.fnUntraced(function* (sessionId: string, type: string, object: object) {
      const now = yield* Clock.currentTimeMillis
      const createdSeconds = Math.floor(now / 1000)
      const payload = JSON.stringify(eventEnvelope({ id: yield* ids.make("evt"), type, createdSeconds, object }))
      const delivery: FakeDelivery = {
        eventId: (JSON.parse(payload) as { id: string }).id,
        sessionId,
        type,
        payload,
        signatureHeader: signPayload(payload, secret, createdSeconds),
        createdAt: new Date(now).toISOString()
      }
      yield* store.insertDelivery(delivery)
      return delivery
    })

    const periodMs = config.fakeBillingPeriodSeconds * 1000
    /** A session opened for an account belongs to it; an anonymous one to nobody in particular. */
    const ownedBy = (session: FakeSession, requester: FakeRequester | undefined) =>
      requester !== undefined &&
      session.metadata.account_id !== undefined &&
      session.metadata.account_id === requester.accountId

    const notFound = (id: string) =>
      new NotFound({ message: `checkout session ${id} not found`, resource: "checkoutSession", id })

    /** Locks the session; an open one past its expiry is expired first (with its event). */
    const load = Effect.fnUntraced(function* (id: string) {
      const session = yield* store.lockSession(id)
      if (!session) return yield* Effect.fail(notFound(id))
      const now = yield* Clock.currentTimeMillis
      if (session.status === "open" && Date.parse(session.expiresAt) <= now) {
        const expired: FakeSession = { ...session, status: "expired", completedAt: new Date(now).toISOString() }
        yield* store.updateSession(expired)
        const delivery = yield* emit(id, "checkout.session.expired", sessionObject(expired))
        return { session: expired, lapsed: delivery as FakeDelivery | undefined }
      }
      return { session, lapsed: undefined as FakeDelivery | undefined }
    })

    const mustBeOpen = (session: FakeSession) =>
      session.status === "open"
        ? Effect.void
        : Effect.fail(
            new Conflict({
              message: `checkout session ${session.id} is already ${session.status}`,
              state: session.status
            })
          )

    const processor = PaymentProcessor.of({
      kind: "fake",
      createCheckoutSession: Effect.fnUntraced(function* (request) {
        const existing = yield* store.findSessionByIdempotencyKey(request.idempotencyKey)
        if (existing) return { sessionId: existing.id, checkoutUrl: pageUrl(existing.id) }
        const id = yield* ids.make("cs_fake")
        const now = yield* Clock.currentTimeMillis
        const fill = (url: string) => url.replaceAll("{CHECKOUT_SESSION_ID}", id)
        yield* store.insertSession({
          id,
          mode: request.mode,
          amountCents: request.amountCents,
          currency: request.currency,
          description: request.description,
          successUrl: fill(request.successUrl),
          cancelUrl: fill(request.cancelUrl),
          metadata: { ...request.metadata },
          customerEmail: request.customerEmail ?? null,
          idempotencyKey: request.idempotencyKey,
          status: "open",
          paymentStatus: "unpaid",
          failureCode: null,
          subscriptionId: null,
          createdAt: new Date(now).toISOString(),
          expiresAt: new Date(now + FAKE_SESSION_TTL_MS).toISOString(),
          completedAt: null
        })
        // A concurrent request with the same key may have won: its session is the one.
        const stored = yield* store.findSessionByIdempotencyKey(request.idempotencyKey)
        const sessionId = stored?.id ?? id
        return { sessionId, checkoutUrl: pageUrl(sessionId) }
      }),
      retrieveSession: (id) =>
        Effect.flatMap(store.getSession(id), (s) =>
          s ? Effect.succeed(toProcessorSession(sessionObject(s))) : Effect.fail(notFound(id))
        ),
      verifyEvent: (rawBody, header) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          verifyAndParse({ payload: rawBody, header, secret, nowSeconds: Math.floor(now / 1000) })
        )
    })

    const finish = (
      session: FakeSession,
      delivery: FakeDelivery | undefined,
      redirectUrl: string
    ): FakeCheckoutOutcome => ({ session, delivery, redirectUrl })

    const page = FakeCheckout.of({
      enabled: true,
      view: (id) => atomically(Effect.map(load(id), ({ session, lapsed }) => ({ session, delivery: lapsed }))),
      pay: Effect.fnUntraced(function* (id, options) {
        const { session, lapsed } = yield* load(id)
        if (lapsed) return finish(session, lapsed, session.cancelUrl)
        yield* mustBeOpen(session)
        const completedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        if (options.failure) {
          const failed: FakeSession = {
            ...session,
            status: "complete",
            paymentStatus: "unpaid",
            failureCode: options.failure,
            completedAt
          }
          yield* store.updateSession(failed)
          return finish(
            failed,
            yield* emit(id, "checkout.session.async_payment_failed", sessionObject(failed)),
            failed.cancelUrl
          )
        }
        const paid: FakeSession = {
          ...session,
          status: "complete",
          paymentStatus: "paid",
          subscriptionId: session.mode === "subscription" ? yield* ids.make("sub_fake") : null,
          completedAt
        }
        yield* store.updateSession(paid)
        return finish(paid, yield* emit(id, "checkout.session.completed", sessionObject(paid)), paid.successUrl)
      }, atomically),
      cancel: Effect.fnUntraced(function* (id) {
        const { session, lapsed } = yield* load(id)
        if (lapsed) return finish(session, lapsed, session.cancelUrl)
        yield* mustBeOpen(session)
        const expired: FakeSession = {
          ...session,
          status: "expired",
          completedAt: new Date(yield* Clock.currentTimeMillis).toISOString()
        }
        yield* store.updateSession(expired)
        return finish(expired, yield* emit(id, "checkout.session.expired", sessionObject(expired)), expired.cancelUrl)
      }, atomically),
      renew: Effect.fnUntraced(function* (id, requester) {
        const { session } = yield* load(id)
        if (!ownedBy(session, requester)) return yield* Effect.fail(notFound(id))
        if (
          session.mode !== "subscription" ||
          session.paymentStatus !== "paid" ||
          session.subscriptionId === null ||
          session.completedAt === null
        ) {
          return yield* Effect.fail(
            new Conflict({ message: `checkout session ${id} is not a paid subscription`, state: session.status })
          )
        }
        // Renewal n is due n periods after the first payment: one invoice per period.
        const renewals = (yield* store.listDeliveries(id)).filter((d) => d.type === "invoice.paid").length
        const dueMs = Date.parse(session.completedAt) + (renewals + 1) * periodMs
        if ((yield* Clock.currentTimeMillis) < dueMs) {
          return yield* Effect.fail(
            new Conflict({
              message: `renewal ${renewals + 1} of checkout session ${id} is due at ${new Date(dueMs).toISOString()} (one per ${config.fakeBillingPeriodSeconds}s billing period)`,
              state: "period_not_over"
            })
          )
        }
        const invoiceId = yield* ids.make("in_fake")
        const invoice = {
          id: invoiceId,
          object: "invoice",
          amount_paid: session.amountCents,
          billing_reason: "subscription_cycle",
          currency: session.currency,
          customer_email: session.customerEmail,
          parent: {
            type: "subscription_details",
            subscription_details: { subscription: session.subscriptionId, metadata: { ...session.metadata } }
          },
          status: "paid"
        }
        return finish(session, yield* emit(id, "invoice.paid", invoice), session.successUrl)
      }, atomically),
      deliveries: (id, requester) =>
        Effect.flatMap(
          store.getSession(id),
          (s): Effect.Effect<ReadonlyArray<FakeDelivery>, NotFound | StorageUnavailable> =>
            s && (s.metadata.account_id === undefined || ownedBy(s, requester))
              ? store.listDeliveries(id)
              : Effect.fail(
                  new NotFound({
                    message: `checkout session ${id} not found for this caller: an account's checkout shows its events to that account's key or dashboard session only`,
                    resource: "checkoutSession",
                    id
                  })
                )
        )
    })

    return Context.make(PaymentProcessor, processor).pipe(Context.add(FakeCheckout, page))
  })
)
