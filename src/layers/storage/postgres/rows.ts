// Row schemas for the Postgres adapters: rows are decoded at the boundary, so a column that does
// not hold what the record promises fails loudly (a defect: the database broke its contract).
import { Effect, Schema, SchemaTransformation } from "effect"
import { iso } from "./PgDb.js"

/** A timestamptz column (a Date from the driver) as the ISO 8601 string the records carry. */
export const IsoTimestamp = Schema.Union([Schema.Date, Schema.String]).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform<string, Date | string>({ decode: iso, encode: (s) => s })
  )
)

export const IsoTimestampOrNull = Schema.NullOr(IsoTimestamp)

/** Decodes every row with `row`; a row that does not match is a defect. */
export const decodeRows =
  <A, I>(row: Schema.Codec<A, I>) =>
  (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> =>
    Effect.orDie(Schema.decodeUnknownEffect(Schema.Array(row))(rows))

/** Decodes the first row with `row` (undefined when there is none); a row that does not match is a defect. */
export const decodeFirst =
  <A, I>(row: Schema.Codec<A, I>) =>
  (rows: ReadonlyArray<unknown>): Effect.Effect<A | undefined> =>
    rows.length === 0 ? Effect.succeed(undefined) : Effect.orDie(Schema.decodeUnknownEffect(row)(rows[0]))
