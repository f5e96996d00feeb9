// The x402 paid call's answers, pure (docs/x402.md): the 402 that asks for a payment, what
// PAYMENT-RESPONSE says of a payment, the receipt, the 202 of a settlement not confirmed yet, the
// purchase a payment makes and the refusals it answers with.
import type { Bought } from "../purchases/Purchases.js"
import type { Inflow } from "../purchases/ExternalFunding.js"
import type { Offer } from "../purchases/Offers.js"
import type { X402Config } from "../platform/AppConfig.js"
import type { Receipt } from "../../schema/mpp/challenge.js"
import { ApprovalRequired, SellerFailed } from "../../schema/mpp/problems.js"
import { MPP_CURRENCY } from "../../schema/mpp/protocol.js"
import { COMMERCE_PREFIX } from "../../schema/platform/routes.js"
import type { TransactionRow } from "../../schema/commerce/transactions.js"
import {
  type PaymentRecord,
  type PaymentView,
  type SettleResponse,
  SettlementPendingResult,
  X402PaymentRequired,
  x402Account
} from "../../schema/x402/x402.js"
import { paymentRequiredOf } from "./wire.js"

export const paymentPath = (id: string) => `${COMMERCE_PREFIX}/x402/payments/${id}`

export const isTagged = (u: unknown, tag: string) =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === tag

export const refused = (
  config: X402Config,
  offer: Offer,
  url: string,
  reason: string,
  message: string
): X402PaymentRequired =>
  new X402PaymentRequired({
    message,
    reason,
    paymentRequired: paymentRequiredOf(config, offer, url, reason),
    hint: "sign a fresh EIP-3009 authorization for the requirements in PAYMENT-REQUIRED and retry with PAYMENT-SIGNATURE"
  })

export const failedSettle = (config: X402Config, errorReason: string, payer?: string): SettleResponse => ({
  success: false,
  errorReason,
  ...(payer !== undefined ? { payer } : {}),
  transaction: "",
  network: config.network
})

export const settleOf = (config: X402Config, p: PaymentRecord): SettleResponse => ({
  success: p.settleTransaction !== null,
  payer: p.payer,
  transaction: p.settleTransaction ?? "",
  network: config.network,
  amount: p.amountUnits,
  ...(p.settleTransaction === null ? { errorReason: p.status } : {}),
  extensions: {
    "agent-commerce": {
      paymentId: p.id,
      status: p.status,
      token: p.token,
      payment: paymentPath(p.id),
      transactionId: p.transactionId,
      refundTransaction: p.refundTransaction
    }
  }
})

export const inflowOf = (config: X402Config, p: PaymentRecord, memo: string): Inflow => ({
  account: x402Account(config.network, config.asset),
  amountCents: p.amountCents,
  reference: p.id,
  memo
})

export const receiptOf = (
  p: PaymentRecord,
  reference: string,
  transactionId: string,
  settlement: Receipt["settlement"],
  at: string
): Receipt => ({
  status: "success",
  method: "x402",
  intent: "exact",
  timestamp: at,
  reference,
  challengeId: p.id,
  transactionId,
  amount: String(p.amountCents),
  currency: MPP_CURRENCY,
  serviceId: p.serviceId,
  tierId: p.tierId,
  settlement
})

export const pendingSettlement = (p: PaymentRecord) =>
  SettlementPendingResult.make({
    status: "settlement_pending",
    serviceId: p.serviceId,
    tierId: p.tierId,
    paymentId: p.id,
    message:
      "the facilitator has not confirmed the settlement yet: do not pay again; this payment is reconciled " +
      "from the chain and reads at follow.payment (X-Payment-Token: the token in PAYMENT-RESPONSE)",
    follow: { payment: paymentPath(p.id) }
  })

/** The purchase request a payment makes. */
export const requestOf = (p: PaymentRecord) => ({
  agentId: p.buyerAgentId,
  accountId: p.buyerAccountId,
  serviceId: p.serviceId,
  tierId: p.tierId,
  input: p.input,
  idempotencyKey: null,
  challenge: { id: p.id, amountCents: p.amountCents }
})

/** The purchase's refusals as the paid call answers them. */
export const refusalOf = (bought: Bought, p: PaymentRecord) => {
  switch (bought._tag) {
    case "ApprovalNeeded":
      return new ApprovalRequired({
        message:
          bought.reason === "manual"
            ? "the wallet's autonomy level is manual: every purchase needs the owner's approval; nothing was settled"
            : `${p.amountCents} cents is above the wallet's approval threshold; nothing was settled`,
        reason: bought.reason
      })
    case "SellerCannotServe":
      return new SellerFailed({
        message: `the seller could not serve the call (simulated ${bought.mode}); nothing was settled`,
        serviceId: p.serviceId
      })
    default:
      return undefined
  }
}

// What a stored payment asked: its amount and the configured rail (the offer's price may have changed since).
export const offerOfRecord = (p: PaymentRecord): Offer =>
  ({
    service: { id: p.serviceId, name: p.serviceId },
    tier: { id: p.tierId, name: p.tierId, priceCents: p.amountCents }
  }) as unknown as Offer

/** The payment as its payer reads it, with its purchase's row (undefined: none yet). */
export const paymentViewOf = (now: PaymentRecord, row: TransactionRow | undefined): PaymentView => ({
  id: now.id,
  status: now.status,
  payer: now.payer,
  network: now.network,
  asset: now.asset,
  amount: now.amountUnits,
  amountCents: now.amountCents,
  serviceId: now.serviceId,
  tierId: now.tierId,
  transactionId: now.transactionId,
  purchaseStatus: row?.tx.status ?? null,
  output: row?.delivery?.output ?? null,
  settleTransaction: now.settleTransaction,
  refundTransaction: now.refundTransaction,
  createdAt: now.createdAt,
  updatedAt: now.updatedAt
})
