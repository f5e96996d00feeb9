// Writes docs/permissions.md from the HttpApi route table and the procedure table, so the
// route → permission table can never drift from the code (a test checks it is current).
import { writeFileSync } from "node:fs"
import { renderPermissionsDoc } from "../src/http/permissionsDoc.js"

writeFileSync("docs/permissions.md", renderPermissionsDoc())
console.log("wrote docs/permissions.md")
