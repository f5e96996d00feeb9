// Shape of a plan seed row (decoded into schema/marketplace Plan at load).
export interface PlanSeed {
  readonly id: "starter" | "pro" | "scale"
  readonly name: string
  readonly price: string
  readonly priceCents: number
  readonly currency: "usd"
  readonly interval: "month"
  readonly credits: number
  readonly max_projects: number | "unlimited"
}
