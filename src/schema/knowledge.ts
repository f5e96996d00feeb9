// Paid knowledge products and the cycle knowledge base (spec §2.5, §2.6, §4.5).
import { Schema } from "effect"

export class KnowledgeProduct extends Schema.Class<KnowledgeProduct>("KnowledgeProduct")({
  id: Schema.Int,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.String,
  priceInCents: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  currency: Schema.String.pipe(Schema.check(Schema.isPattern(/^[a-z]{3}$/))),
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
