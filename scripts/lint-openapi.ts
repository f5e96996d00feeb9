// Lints the OpenAPI document the app serves (built by src/http/openapi.ts, no server started) with
// Redocly's recommended rules and the exceptions justified in redocly.yaml; exits non-zero on a finding.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { apiDocument } from "../src/http/openapi.js"

// Any absolute URL does: the lint judges the document's shape, not the host.
const baseUrl = process.env.BASE_URL ?? "https://agent-commerce.example"
const dir = mkdtempSync(path.join(tmpdir(), "openapi-lint-"))
const file = path.join(dir, "openapi.json")
try {
  writeFileSync(file, JSON.stringify(apiDocument(baseUrl), null, 2))
  const redocly = path.join("node_modules", ".bin", "redocly")
  const run = spawnSync(redocly, ["lint", file, "--config", "redocly.yaml", "--max-problems", "1000"], {
    stdio: "inherit",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
  })
  process.exitCode = run.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
