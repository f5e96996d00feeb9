// Builder projects (spec §4.3): the create body and its inputs, the build state machine, the
// stored row, and the plan's project quota.
import { Schema } from "effect"
import { Cents } from "../platform/common.js"

export const InputKind = Schema.Literals(["voice", "text", "pdf", "image", "csv"])
export type InputKind = typeof InputKind.Type

export const ProjectInput = Schema.Struct({
  kind: InputKind,
  /** e.g. text/plain, text/csv, application/pdf, image/png, audio/wav. */
  mediaType: Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100))),
  /** How `content` is encoded; default `text` for text and csv, `base64` for the binary kinds. */
  encoding: Schema.optional(Schema.Literals(["text", "base64"])),
  content: Schema.String,
  name: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(200))))
})
export type ProjectInput = typeof ProjectInput.Type

export const BuildStatus = Schema.Literals([
  "queued",
  "analyzing",
  "generating",
  "building",
  "deploying",
  "live",
  "failed"
])
export type BuildStatus = typeof BuildStatus.Type
/** The happy path, in order; `failed` can follow any non-terminal step. */
export const buildSteps = ["queued", "analyzing", "generating", "building", "deploying", "live"] as const
/** The steps a test (or a demo) can make fail. */
export const FailableStep = Schema.Literals(["analyzing", "generating", "building", "deploying"])
export type FailableStep = typeof FailableStep.Type

/** The shortest description a project can be built from, without a template. */
export const MIN_DESCRIPTION = 10

export const CreateProjectBody = Schema.Struct({
  name: Schema.String.pipe(
    Schema.check(Schema.isTrimmed()),
    Schema.check(Schema.isMinCodePoints(1)),
    Schema.check(Schema.isMaxCodePoints(80))
  ),
  templateId: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(100)))),
  description: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(4000)))),
  inputs: Schema.optional(Schema.Array(ProjectInput)),
  /** Simulation control: make the build fail during this step (same as `[fail:<step>]` in the description). */
  simulateFailure: Schema.optional(FailableStep)
}).check(
  Schema.makeFilter(
    (body) =>
      body.templateId !== undefined ||
      [...(body.description ?? "").trim()].length >= MIN_DESCRIPTION || {
        path: ["description"],
        issue: `give a templateId, or a description of at least ${MIN_DESCRIPTION} characters`
      },
    {
      description:
        `A templateId, or a description of at least ${MIN_DESCRIPTION} characters ` +
        "(not counting surrounding spaces).",
      toJsonSchema: () => ({
        anyOf: [
          { required: ["templateId"], properties: { templateId: { type: "string" } } },
          // Trimmed, at least MIN_DESCRIPTION code points: a non-space, MIN_DESCRIPTION - 2 of anything, a non-space.
          {
            required: ["description"],
            properties: { description: { type: "string", pattern: `\\S[\\s\\S]{${MIN_DESCRIPTION - 2},}\\S` } }
          }
        ]
      })
    }
  )
)
export type CreateProjectBody = typeof CreateProjectBody.Type

export const InputSummary = Schema.Struct({
  index: Schema.Int,
  kind: InputKind,
  mediaType: Schema.String,
  name: Schema.NullOr(Schema.String),
  bytes: Schema.Int,
  sha256: Schema.String,
  /** What the check found: e.g. "PNG image", "CSV, 3 columns × 12 rows", "WAV audio". */
  detected: Schema.String
})
export type InputSummary = typeof InputSummary.Type

export const BuildStep = Schema.Struct({
  status: BuildStatus,
  at: Schema.String,
  message: Schema.String
})
export type BuildStep = typeof BuildStep.Type

export class Build extends Schema.Class<Build>("Build")({
  status: BuildStatus,
  progressPercent: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100 }))),
  steps: Schema.Array(BuildStep),
  failureReason: Schema.NullOr(Schema.String),
  startedAt: Schema.String,
  updatedAt: Schema.String,
  finishedAt: Schema.NullOr(Schema.String),
  /** Always true: the builder simulates generation and deployment (see README). */
  simulated: Schema.Literal(true)
}) {}

export class Project extends Schema.Class<Project>("Project")({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  templateId: Schema.NullOr(Schema.String),
  ownerAgentId: Schema.String,
  inputs: Schema.Array(InputSummary),
  costCents: Cents,
  build: Build,
  createdAt: Schema.String
}) {}

/** The stored project row, build state included. */
export interface ProjectRecord {
  readonly id: string
  readonly accountId: string
  readonly agentId: string
  readonly name: string
  readonly description: string | null
  readonly templateId: string | null
  readonly inputs: ReadonlyArray<InputSummary>
  readonly costCents: number
  readonly status: BuildStatus
  readonly progressPercent: number
  readonly steps: ReadonlyArray<BuildStep>
  readonly failAt: FailableStep | null
  readonly failureReason: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly finishedAt: string | null
  /** When the worker should advance it next (null once terminal). */
  readonly nextRunAt: string | null
}

/** 403 — the account's plan allows no more projects. */
export class ProjectQuotaExceeded extends Schema.TaggedError<ProjectQuotaExceeded>()(
  "ProjectQuotaExceeded",
  {
    message: Schema.String,
    planId: Schema.NullOr(Schema.String),
    limit: Schema.Int,
    used: Schema.Int
  },
  { httpApiStatus: 403, description: "The plan's project quota is used up; upgrade the plan." }
) {}
