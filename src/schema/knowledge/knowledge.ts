// Paid knowledge products and the cycle knowledge base (spec §2.5, §2.6, §4.5).
import { Schema } from "effect"

export class KnowledgeProduct extends Schema.Class<KnowledgeProduct>("KnowledgeProduct")({
  id: Schema.Int,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.String,
  priceInCents: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  currency: Schema.String.pipe(Schema.check(Schema.isPattern(/^[a-z]{3}$/u))),
  category: Schema.String,
  isActive: Schema.Boolean
}) {}

export const KnowledgePhase = Schema.Struct({
  name: Schema.String,
  physiology: Schema.String,
  femaleSensations: Schema.Record(Schema.String, Schema.Unknown),
  partnerGuidance: Schema.Record(Schema.String, Schema.Unknown),
  painScale: Schema.Record(Schema.String, Schema.Unknown)
})

export const KnowledgeBase = Schema.Struct({
  phases: Schema.Record(Schema.String, KnowledgePhase),
  story: Schema.Struct({ title: Schema.String, quote: Schema.String }),
  disclaimer: Schema.String
})
export type KnowledgeBase = typeof KnowledgeBase.Type

/** One part of a delivered knowledge product: a heading and its text (pt-BR, plain text). */
export const KnowledgeSection = Schema.Struct({ heading: Schema.String, body: Schema.String })

/**
 * What a paid knowledge product delivers (docs/payments.md, "Reading what was bought"): a guide read
 * on the spot, a written consultation drawn from the knowledge base, or a live session's access
 * code with its preparation material.
 */
export const KnowledgeFormat = Schema.Literals(["guide", "consultation", "live_session"])

export class KnowledgeContent extends Schema.Class<KnowledgeContent>("KnowledgeContent")({
  accessId: Schema.String,
  productId: Schema.Int,
  productName: Schema.String,
  format: KnowledgeFormat,
  language: Schema.Literal("pt-BR"),
  grantedAt: Schema.String,
  sections: Schema.Array(KnowledgeSection),
  disclaimer: Schema.String
}) {}

/** The buyer's proof for reading a purchase: the access id and the checkout session it was paid in. */
export const AccessContentInput = Schema.Struct({
  accessId: Schema.String.pipe(
    Schema.check(Schema.isMaxCodePoints(64)),
    Schema.check(Schema.isPattern(/^acc_[A-Za-z0-9_-]+$/u, { message: "must be an access id (acc_…)" }))
  ),
  sessionId: Schema.String.pipe(
    Schema.check(Schema.isMaxCodePoints(255)),
    Schema.check(Schema.isPattern(/^[A-Za-z0-9_-]+$/u, { message: "must be a checkout session id" }))
  )
})
