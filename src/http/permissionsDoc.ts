// Renders the route → permission table (docs/permissions.md) from the route and procedure tables.
import { Api } from "./api.js"
import { routeTable } from "./routeTable.js"
import { procedures } from "./procedures.js"

export const renderPermissionsDoc = (): string => {
  const routes = [...routeTable(Api)].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))
  const lines = [
    "# Route → permission table",
    "",
    "Generated from the HttpApi definition and the procedure table by `npx tsx scripts/permissions-doc.ts`;",
    "`test/http/permissions.test.ts` fails when this file is stale and walks every row: no key → 401,",
    "a key without the permission → 403.",
    "",
    "Key routes take `Authorization: Bearer <key>`; *any key* means any valid, unrevoked, unexpired key.",
    "Session routes take the dashboard's `ac_session` cookie. `commerce:*` on a key grants the four",
    "commerce permissions (not `webhooks:manage`).",
    "",
    "`webhooks:manage` is this service's addition to spec §2.4's lists, which name no permission for",
    "webhooks: where an agent's events go, its signing secret and its delivery log need their own grant,",
    "so a leaked read-only key cannot send every event elsewhere. Keys made before it existed do not",
    "have it: create a key with it (dashboard or `npm run keys`) to manage the webhook.",
    "",
    "## REST",
    "",
    "| Method | Path | Auth | Permission | Summary |",
    "|---|---|---|---|---|"
  ]
  for (const r of routes) {
    const permission = r.auth === "key" ? (r.permission ?? "any key") : "—"
    lines.push(`| ${r.method} | \`${r.path}\` | ${r.auth} | ${permission} | ${r.summary.replace(/\|/g, "\\|")} |`)
  }
  lines.push(
    "",
    "## Procedures (`/api/trpc/<name>`)",
    "",
    "| Procedure | Type | Access | Permission | Description |",
    "|---|---|---|---|---|"
  )
  for (const [name, p] of Object.entries(procedures).sort(([a], [b]) => a.localeCompare(b))) {
    const access = p.access._tag === "public" ? "public" : "key or session"
    const permission = p.access._tag === "authenticated" ? (p.access.permission ?? "any") : "—"
    lines.push(`| \`${name}\` | ${p.type} | ${access} | ${permission} | ${p.description.replace(/\|/g, "\\|")} |`)
  }
  return lines.join("\n") + "\n"
}
