// The wire form of a payment refusal: RFC 9457 problem details (application/problem+json) with the
// Payment scheme's type URIs (docs/mpp.md), built from the encoded PaymentRequired / InsufficientCredits.
import { type Challenge } from "../schema/mpp/challenge.js"
import {
  type MppProblem,
  MppProblem as MppProblemSchema,
  type PaymentProblem,
  problemStatus,
  problemTitles,
  problemType
} from "../schema/mpp/problems.js"
import { WALLET_INSUFFICIENT_PROBLEM } from "../schema/mpp/protocol.js"
import { Schema } from "effect"

const isMppProblem = Schema.is(MppProblemSchema)
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** An encoded error that goes on the wire as payment problem details. */
export const isPaymentProblemSource = (record: Record<string, unknown>): boolean =>
  (record._tag === "PaymentRequired" && isMppProblem(record.problem)) || record._tag === "InsufficientCredits"

/**
 * The problem details of an encoded PaymentRequired (with its fresh challenge), or of an encoded
 * InsufficientCredits (a purchase the wallet cannot cover: our wallet-insufficient-funds type, and
 * how to fund it).
 */
export const toPaymentProblem = (
  record: Record<string, unknown>,
  requestId: string,
  instance: string
): PaymentProblem | Record<string, unknown> => {
  const detail = typeof record.message === "string" ? record.message : "payment required"
  if (record._tag === "InsufficientCredits") {
    const { _tag, message, ...rest } = record
    void _tag
    void message
    return {
      type: WALLET_INSUFFICIENT_PROBLEM,
      title: problemTitles["wallet-insufficient-funds"],
      status: 402,
      detail,
      instance,
      ...rest,
      hint: "fund the wallet (howToFund), then send the same request again; the same Idempotency-Key is fine, a 402 is never stored",
      message: detail,
      requestId
    }
  }
  const problem = record.problem as MppProblem
  const challenge = record.challenge as Challenge
  return {
    type: problemType(problem),
    title: problemTitles[problem],
    status: problemStatus(problem),
    detail,
    instance,
    challengeId: challenge.id,
    challenge,
    methods: record.methods as PaymentProblem["methods"],
    minimumChargeCents: record.minimumChargeCents as number,
    ...(typeof record.missingCents === "number" ? { missingCents: record.missingCents } : {}),
    ...(typeof record.requiredCents === "number" ? { requiredCents: record.requiredCents } : {}),
    ...(typeof record.balanceCents === "number" ? { balanceCents: record.balanceCents } : {}),
    ...(typeof record.retryAfter === "number" ? { retryAfter: record.retryAfter } : {}),
    hint: typeof record.hint === "string" ? record.hint : "",
    ...(isRecord(record.howToFund) ? { howToFund: record.howToFund as PaymentProblem["howToFund"] } : {}),
    message: detail,
    requestId
  }
}
