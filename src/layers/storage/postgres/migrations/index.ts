// Every Postgres migration, in order. Add a file per change; never edit one that has shipped.
import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"
import m0001 from "./0001_foundation.js"
import m0002 from "./0002_keys.js"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_foundation": m0001,
  "0002_keys": m0002
}
