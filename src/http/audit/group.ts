// The owner's console routes (dashboard session): the overview of every agent, an agent's audit
// trail, and its transactions or audit trail as a CSV file.
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { AuditPage, AuditUrlParams } from "../../schema/audit/audit.js"
import { Overview } from "../../schema/audit/overview.js"
import { DASHBOARD_PREFIX } from "../../schema/platform/routes.js"
import { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import { DashboardAuth } from "../middleware/auth.js"
import { Id } from "../commerce/params.js"

const AgentParam = Schema.Struct({ agentId: Id })

export const ExportKind = Schema.Literals(["transactions", "audit"])
const ExportParams = Schema.Struct({ kind: ExportKind })

/** The CSV file: a header row, then one row per record (docs/dashboard.md, "CSV export"). */
const CsvFile = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv" }))

export class ConsoleGroup extends HttpApiGroup.make("console")
  .add(
    HttpApiEndpoint.get("overview", "/overview", {
      success: Overview,
      error: [StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "Every agent of the account: balance, spend today against its limits, freeze, pending approvals, last refusal"
    )
  )
  .add(
    HttpApiEndpoint.get("agentAudit", "/agents/:agentId/audit", {
      params: AgentParam,
      query: AuditUrlParams,
      success: AuditPage,
      error: [InvalidInput, NotFound, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "An agent's audit trail, newest first: approvals decided, policy changes, freezes (who, when, before, after)"
    )
  )
  .add(
    HttpApiEndpoint.get("agentExport", "/agents/:agentId/export.csv", {
      params: AgentParam,
      query: ExportParams,
      success: CsvFile,
      error: [InvalidInput, NotFound, StorageUnavailable]
    }).annotate(
      OpenApi.Summary,
      "An agent's transactions or audit trail as a CSV file (text/csv, a header row, amounts in cents and dollars)"
    )
  )
  .middleware(DashboardAuth)
  .prefix(DASHBOARD_PREFIX) {}
