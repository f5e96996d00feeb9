// The builder's rules that need no storage: what a project costs, the quota without a plan, the
// simulated build's timing and progress, and how a project record is shown.
import {
  Build,
  type BuildStatus,
  buildSteps,
  Project,
  ProjectQuotaExceeded,
  type ProjectRecord
} from "../../schema/projects/builder.js"

/** Credits (1 credit = 1 cent) charged per project: a base price plus a price per input. */
export const PROJECT_BASE_COST_CENTS = 100
export const PROJECT_INPUT_COST_CENTS = 20
export const projectCost = (inputCount: number) => PROJECT_BASE_COST_CENTS + PROJECT_INPUT_COST_CENTS * inputCount

/** The project quota of an account's plan. */
export type ProjectQuota =
  | { readonly planId: null; readonly limit: number | "unlimited"; readonly planName?: undefined }
  | { readonly planId: string | null; readonly planName: string; readonly limit: number | "unlimited" }

/** The refusal of one more project when the account already has `used` of its quota, or undefined. */
export const quotaRefusal = (quota: ProjectQuota, used: number): ProjectQuotaExceeded | undefined => {
  if (quota.limit === "unlimited" || used < quota.limit) return undefined
  const planName = quota.planId === null ? "no paid plan" : `the ${quota.planName} plan`
  return new ProjectQuotaExceeded({
    message:
      `${planName} allows ${quota.limit} project${quota.limit === 1 ? "" : "s"} and this account has ` +
      `${used}; upgrade the plan to create more`,
    planId: quota.planId,
    limit: quota.limit,
    used
  })
}

/** Projects allowed without a paid plan (the same as Starter). */
export const NO_PLAN_PROJECT_LIMIT = 1

/** Simulated duration of each build step, and how often the worker looks for due builds. */
export const STEP_MS = 500
export const WORKER_TICK_MS = 200
export const WORKER_BATCH = 25

export const progressOf = (status: BuildStatus, previous: number): number =>
  status === "failed" ? previous : buildSteps.indexOf(status) * 20

export const FAIL_MARKER = /\[fail:(analyzing|generating|building|deploying)\]/

export const toProject = (r: ProjectRecord): Project =>
  Project.make({
    id: r.id,
    name: r.name,
    description: r.description,
    templateId: r.templateId,
    ownerAgentId: r.agentId,
    inputs: [...r.inputs],
    costCents: r.costCents as Project["costCents"],
    build: Build.make({
      status: r.status,
      progressPercent: r.progressPercent,
      steps: [...r.steps],
      failureReason: r.failureReason,
      startedAt: r.createdAt,
      updatedAt: r.updatedAt,
      finishedAt: r.finishedAt,
      simulated: true
    }),
    createdAt: r.createdAt
  })

export const stepMessage = (r: ProjectRecord, status: BuildStatus): string => {
  switch (status) {
    case "queued":
      return (
        `Queued: ${r.templateId ? `from template ${r.templateId}` : "from a description"}, ` +
        `${r.inputs.length} input${r.inputs.length === 1 ? "" : "s"}`
      )
    case "analyzing":
      return r.inputs.length > 0
        ? `Analyzing ${r.description ? "the description and " : ""}${r.inputs.map((i) => i.detected).join("; ")}`
        : `Analyzing ${r.description ? "the description" : "the template"}`
    case "generating":
      return "Generating the application from the template and the analysis"
    case "building":
      return "Building and running the generated test suite"
    case "deploying":
      return "Deploying to the simulated hosting environment"
    case "live":
      return "Live (simulated deployment)"
    case "failed":
      return r.failureReason ?? "failed"
  }
}
