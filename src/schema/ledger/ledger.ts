// The double-entry ledger: accounts, postings, entries and the 85/15 settlement split.
import { Schema } from "effect"

/**
 * Ledger account names. Balances of `wallet:` and `escrow:` accounts may never go negative;
 * `external:` accounts are the outside world (money in from the processor is a negative balance
 * there) and `platform:` accounts are the platform's own.
 */
export const walletAccount = (agentId: string) => `wallet:${agentId}`
export const escrowAccount = (holdId: string) => `escrow:${holdId}`
export const PLATFORM_FEES = "platform:fees"
export const EXTERNAL_PAYMENTS = "external:payments"
export const EXTERNAL_GRANTS = "external:grants"

/** Accounts whose balance may go below zero. */
export const mayGoNegative = (account: string) => account.startsWith("external:")

export const Posting = Schema.Struct({
  account: Schema.String.pipe(Schema.check(Schema.isMinCodePoints(3)), Schema.check(Schema.isMaxCodePoints(200))),
  /** Signed integer cents: positive credits the account, negative debits it. */
  amount: Schema.Int
})
export type Posting = typeof Posting.Type

export const EntryKind = Schema.Literals([
  "funding", // money in from the payment processor (plan, recharge)
  "grant", // simulated top-up in fake-payments mode
  "purchase", // buyer → seller + platform fee (instant settlement)
  "escrow_hold", // buyer wallet → escrow
  "escrow_release", // escrow → buyer wallet (compensation)
  "escrow_settle", // escrow → seller + platform fee
  "refund", // reversal of a purchase or settlement
  "project_creation", // credits spent on the builder
  "investment", // credits converted into token holdings
  "adjustment"
])
export type EntryKind = typeof EntryKind.Type

export class JournalEntry extends Schema.Class<JournalEntry>("JournalEntry")({
  id: Schema.String,
  kind: EntryKind,
  /** What caused it: a transaction id, a checkout session id, a saga id … */
  reference: Schema.String,
  memo: Schema.String,
  postings: Schema.Array(Posting),
  createdAt: Schema.String
}) {}

/** 402 — a wallet (or escrow) would go below zero. */
export class InsufficientFunds extends Schema.TaggedError<InsufficientFunds>()(
  "InsufficientFunds",
  {
    message: Schema.String,
    account: Schema.String,
    balanceCents: Schema.Int,
    requiredCents: Schema.Int,
    missingCents: Schema.Int
  },
  { httpApiStatus: 402 }
) {}

/**
 * Settlement split (spec §4.4 rule 3): platform fee = floor(price × 15 / 100), seller gets the rest.
 * Integer arithmetic only; fee + seller = price exactly, so no cent is created or lost. The
 * fraction of a cent is the seller's (a 1-cent sale pays the seller 1 and the platform 0).
 */
export const PLATFORM_FEE_PERCENT = 15
export const splitSettlement = (priceCents: number): { readonly sellerCents: number; readonly feeCents: number } => {
  if (!Number.isSafeInteger(priceCents) || priceCents < 0)
    throw new RangeError(`price must be a non-negative integer, got ${priceCents}`)
  // 15 % rounded to the nearest cent, halves up, in integers (no float ever touches the amount):
  // the platform's take averages exactly 15 % instead of being rounded away on small prices.
  const feeCents = Math.floor((priceCents * PLATFORM_FEE_PERCENT + 50) / 100)
  return { sellerCents: priceCents - feeCents, feeCents }
}
