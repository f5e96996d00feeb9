// PaymentsStore: the storage port for checkouts, processed processor events, knowledge access
// grants and acquisitions. Adapters: src/layers/payments/PaymentsStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { Acquisition, CheckoutRecord, KnowledgeAccess } from "../../schema/payments/payments.js"

/** Storage port: checkouts, processed event ids, knowledge access grants, acquisitions. */
export interface PaymentsStoreService {
  /** Inserts unless a checkout with this session id exists (a retried request); returns the stored one. */
  readonly insertCheckout: (
    checkout: CheckoutRecord
  ) => Effect.Effect<{ readonly checkout: CheckoutRecord; readonly inserted: boolean }, StorageUnavailable>
  readonly getCheckout: (sessionId: string) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
  /** The checkout, row-locked for this unit of work. */
  readonly lockCheckout: (sessionId: string) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
  readonly updateCheckout: (checkout: CheckoutRecord) => Effect.Effect<void, StorageUnavailable>
  readonly findCheckoutBySubscription: (
    subscriptionId: string
  ) => Effect.Effect<CheckoutRecord | undefined, StorageUnavailable>
  /** Records a processor event id; false when it was recorded before (a replay). */
  readonly recordEvent: (event: {
    readonly id: string
    readonly type: string
    readonly receivedAt: string
  }) => Effect.Effect<boolean, StorageUnavailable>
  readonly setEventOutcome: (id: string, outcome: string) => Effect.Effect<void, StorageUnavailable>
  readonly insertAccess: (access: KnowledgeAccess) => Effect.Effect<void, StorageUnavailable>
  readonly getAccessBySession: (sessionId: string) => Effect.Effect<KnowledgeAccess | undefined, StorageUnavailable>
  readonly insertAcquisition: (acquisition: Acquisition) => Effect.Effect<void, StorageUnavailable>
  readonly updateAcquisition: (acquisition: Acquisition) => Effect.Effect<void, StorageUnavailable>
  readonly getAcquisition: (id: string) => Effect.Effect<Acquisition | undefined, StorageUnavailable>
  /**
   * Up to `limit` of the agent's acquisitions, newest first, starting after the acquisition
   * `beforeId` (a keyset page on (agent_id, seq); an unknown `beforeId` gives an empty page).
   */
  readonly listAcquisitions: (
    agentId: string,
    page: { readonly limit: number; readonly beforeId?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<Acquisition>, StorageUnavailable>
  /** The agent's paid acquisition of the project, if any (one indexed lookup, not the agent's history). */
  readonly findPaidAcquisition: (
    agentId: string,
    projectId: string
  ) => Effect.Effect<Acquisition | undefined, StorageUnavailable>
}

export class PaymentsStore extends Context.Service<PaymentsStore, PaymentsStoreService>()(
  "agent-commerce/PaymentsStore"
) {}
