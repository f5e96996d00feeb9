// Marketplace templates and subscription plans (spec §2.2, §2.3).
import { Schema } from "effect"
import { Cents } from "../platform/common.js"

export const TemplateCategory = Schema.Literals([
  "Communication",
  "AI & Automation",
  "Design & Branding",
  "Infrastructure",
  "Marketing & Growth",
  "Developer Tools",
  "Finance & Investment",
  "Productivity"
])
export type TemplateCategory = typeof TemplateCategory.Type
export const templateCategories = TemplateCategory.literals

export class Template extends Schema.Class<Template>("Template")({
  id: Schema.String.pipe(Schema.check(Schema.isPattern(/^[a-z0-9]+(-[a-z0-9]+)*$/u))),
  name: Schema.String,
  category: TemplateCategory,
  description: Schema.String,
  mrr_potential: Schema.String,
  growth_rate: Schema.String,
  rating: Schema.Number.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 5 }))),
  price: Schema.String,
  revenue_share_creator: Schema.Literal("85%"),
  revenue_share_platform: Schema.Literal("15%")
}) {}

export const PlanId = Schema.Literals(["starter", "pro", "scale"])
export type PlanId = typeof PlanId.Type

export class Plan extends Schema.Class<Plan>("Plan")({
  id: PlanId,
  name: Schema.String,
  /** Display price, e.g. "49 USD/month". */
  price: Schema.String,
  priceCents: Cents,
  currency: Schema.Literal("usd"),
  interval: Schema.Literal("month"),
  credits: Schema.Int,
  /** A number, or "unlimited". */
  max_projects: Schema.Union([Schema.Int, Schema.Literal("unlimited")])
}) {}
