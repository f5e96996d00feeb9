// Every Postgres migration, in order. Add a file per change; never edit one that has shipped.
import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"
import m0001 from "./0001_foundation.js"
import m0002 from "./0002_keys.js"
import m0003 from "./0003_ledger.js"
import m0004 from "./0004_events.js"
import m0010 from "./0010_projects.js"
import m0012 from "./0012_invest.js"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_foundation": m0001,
  "0002_keys": m0002,
  "0003_ledger": m0003,
  "0004_events": m0004,
  "0010_projects": m0010,
  "0012_invest": m0012
}
