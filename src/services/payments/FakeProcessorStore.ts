// FakeProcessorStore: the storage port of the fake payment processor (its sessions and the signed
// events it sent). Adapters: src/layers/payments/FakeProcessorStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { CheckoutMode } from "../../schema/payments/payments.js"

/** A session of the fake processor (kept in our storage, so a restart keeps it). */
export interface FakeSession {
  readonly id: string
  readonly mode: CheckoutMode
  readonly amountCents: number
  readonly currency: string
  readonly description: string
  readonly successUrl: string
  readonly cancelUrl: string
  readonly metadata: Readonly<Record<string, string>>
  readonly customerEmail: string | null
  readonly idempotencyKey: string
  readonly status: "open" | "complete" | "expired"
  readonly paymentStatus: "paid" | "unpaid"
  /** Why the test payment failed (e.g. card_declined), when it did. */
  readonly failureCode: string | null
  readonly subscriptionId: string | null
  readonly createdAt: string
  readonly expiresAt: string
  readonly completedAt: string | null
}

/** One signed event the fake processor emitted: the exact body and `Stripe-Signature` header. */
export interface FakeDelivery {
  readonly eventId: string
  readonly sessionId: string
  readonly type: string
  readonly payload: string
  readonly signatureHeader: string
  readonly createdAt: string
}

/** Storage port of the fake processor. */
export interface FakeProcessorStoreService {
  /** Does nothing when a session with the same idempotency key exists (read it back by key). */
  readonly insertSession: (session: FakeSession) => Effect.Effect<void, StorageUnavailable>
  readonly getSession: (id: string) => Effect.Effect<FakeSession | undefined, StorageUnavailable>
  readonly lockSession: (id: string) => Effect.Effect<FakeSession | undefined, StorageUnavailable>
  readonly findSessionByIdempotencyKey: (key: string) => Effect.Effect<FakeSession | undefined, StorageUnavailable>
  readonly updateSession: (session: FakeSession) => Effect.Effect<void, StorageUnavailable>
  readonly insertDelivery: (delivery: FakeDelivery) => Effect.Effect<void, StorageUnavailable>
  /** Oldest first. */
  readonly listDeliveries: (sessionId: string) => Effect.Effect<ReadonlyArray<FakeDelivery>, StorageUnavailable>
}

export class FakeProcessorStore extends Context.Service<FakeProcessorStore, FakeProcessorStoreService>()(
  "agent-commerce/FakeProcessorStore"
) {}
