// Paid knowledge products and the cycle knowledge base (spec §2.5, §2.6, §4.5).
import { Schema } from "effect"

export class KnowledgeProduct extends Schema.Class<KnowledgeProduct>("KnowledgeProduct")({
  id: Schema.Int,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.String,
  priceInCents: Schema.Int.pipe(Schema.nonNegative()),
  currency: Schema.String.pipe(Schema.pattern(/^[a-z]{3}$/)),
  category: Schema.String,
  isActive: Schema.Boolean
}) {}

export const KnowledgePhase = Schema.Struct({
  name: Schema.String,
  physiology: Schema.String,
  femaleSensations: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  partnerGuidance: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  painScale: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const KnowledgeBase = Schema.Struct({
  phases: Schema.Record({ key: Schema.String, value: KnowledgePhase }),
  story: Schema.Struct({ title: Schema.String, quote: Schema.String }),
  disclaimer: Schema.String
})
export type KnowledgeBase = typeof KnowledgeBase.Type
