// Column schemas for the payments Postgres adapters: rows are decoded, not cast.
import type { SqlError } from "effect/sql"
import { Effect, Schema, SchemaTransformation } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { iso, orUnavailable } from "../storage/postgres/PgDb.js"

/** A timestamptz column (a Date from the driver) as the ISO string the records carry. */
export const IsoTimestamp = Schema.Union([Schema.Date, Schema.String]).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform<string, Date | string>({ decode: iso, encode: (s) => s })
  )
)

/**
 * Runs a statement and decodes its rows with `row`. A row that does not decode is a defect: the
 * database broke its contract, as a bad cast would have (but named).
 */
export const decodeRows = <S extends Schema.Top & { readonly DecodingServices: never }>(row: S) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(row))
  return <E, R>(
    statement: Effect.Effect<ReadonlyArray<unknown>, E | SqlError.SqlError, R>
  ): Effect.Effect<ReadonlyArray<S["Type"]>, Exclude<E, SqlError.SqlError> | StorageUnavailable, R> =>
    Effect.flatMap(orUnavailable(statement), (rows) => Effect.orDie(decode(rows)))
}

/** The first decoded row, or undefined. */
export const first = <A>(rows: ReadonlyArray<A>): A | undefined => rows[0]
