// Subscription plans (spec §2.3): exact prices, credits and project quotas.
import type { PlanSeed } from "./types-plans.js"

export const plans: ReadonlyArray<PlanSeed> = [
  {
    id: "starter",
    name: "Starter",
    price: "49 USD/month",
    priceCents: 4900,
    currency: "usd",
    interval: "month",
    credits: 500,
    max_projects: 1
  },
  {
    id: "pro",
    name: "Pro",
    price: "99 USD/month",
    priceCents: 9900,
    currency: "usd",
    interval: "month",
    credits: 2500,
    max_projects: 5
  },
  {
    id: "scale",
    name: "Scale",
    price: "299 USD/month",
    priceCents: 29900,
    currency: "usd",
    interval: "month",
    credits: 10000,
    max_projects: "unlimited"
  }
]
