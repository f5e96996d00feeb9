// Shared value schemas: money in integer minor units, ids, timestamps and cursor pagination.
import { Schema } from "effect"

/** Integer minor units (cents). Never a float, never negative. */
export const Cents = Schema.Int.pipe(
  Schema.check(Schema.isGreaterThanOrEqualTo(0, { message: "must be a non-negative integer number of cents" })),
  Schema.check(Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER)),
  Schema.brand("Cents")
)
export type Cents = typeof Cents.Type

export const cents = (n: number): Cents => Cents.make(n)

/** ISO 8601 timestamp string on the wire. */
export const Timestamp = Schema.String.pipe(Schema.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}T/u)))

/**
 * An ISO 8601 date or date-time as the API reads one (`2026-01-31`, `2026-01-31T12:00`,
 * `2026-01-31T12:00:00.5Z`, `…+02:00`): years 1000–9999, real months, days, hours, minutes and
 * seconds. Every string it matches parses as a time (JavaScript's ISO parser rolls a day past the
 * month's end into the next month, as PostgreSQL does not need to see), so the document's pattern
 * is the whole rule.
 */
export const ISO_TIME =
  /^[1-9]\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[Tt](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/u
export const IsoTime = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(ISO_TIME, {
      message: "must be an ISO 8601 date or date-time, e.g. 2026-01-31 or 2026-01-31T12:00:00Z"
    })
  )
)

/** Opaque cursor for keyset pagination. */
export const Cursor = Schema.String.pipe(Schema.check(Schema.isMaxCodePoints(512)))

/**
 * A query parameter that is a number: text on the wire, decoded to a finite number in
 * [minimum, maximum] (an integer when `integer`). The encoded side carries a check that passes
 * every string but whose JSON Schema is the number's, so the OpenAPI document and the MCP tools type the
 * parameter as the number it is (liftQueryNumbers lifts it out of the string's schema).
 */
export const QueryNumber = (options: {
  readonly minimum: number
  readonly maximum: number
  readonly integer?: boolean
}) =>
  Schema.String.check(
    Schema.makeFilter((_: string) => true, {
      toJsonSchema: () => ({
        type: options.integer ? "integer" : "number",
        minimum: options.minimum,
        maximum: options.maximum
      })
    })
  ).pipe(
    Schema.decodeTo(
      options.integer
        ? Schema.FiniteFromString.pipe(
            Schema.check(Schema.isInt()),
            Schema.check(Schema.isBetween({ minimum: options.minimum, maximum: options.maximum }))
          )
        : Schema.FiniteFromString.pipe(
            Schema.check(Schema.isBetween({ minimum: options.minimum, maximum: options.maximum }))
          )
    )
  )

/** An integer query parameter in [minimum, maximum]. */
export const QueryInt = (minimum: number, maximum: number) => QueryNumber({ minimum, maximum, integer: true })

/** `limit` query parameter: 1..100, default applied by the service. */
export const PageLimit = QueryInt(1, 100)

/** Base64url encode / decode of a JSON cursor value. */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url")
export const decodeCursor = (cursor: string): unknown => {
  try {
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
}

/** The (createdAt, id) keyset position of a page's last row, as a cursor. */
export const encodeTimeCursor = (row: { readonly createdAt: string; readonly id: string }): string =>
  encodeCursor({ c: row.createdAt, i: row.id })
/**
 * A cursor made by encodeTimeCursor, back to its position (the time normalised to ISO 8601);
 * undefined when it is not one (so a forged time never reaches a SQL cast).
 */
export const decodeTimeCursor = (cursor: string): { readonly createdAt: string; readonly id: string } | undefined => {
  const c = decodeCursor(cursor) as { c?: unknown; i?: unknown } | undefined
  if (!c || typeof c !== "object" || typeof c.c !== "string" || typeof c.i !== "string") return undefined
  const t = Date.parse(c.c)
  return Number.isFinite(t) ? { createdAt: new Date(t).toISOString(), id: c.i } : undefined
}

export const Email = Schema.String.pipe(
  Schema.check(Schema.isTrimmed({ message: "must not have surrounding spaces" })),
  Schema.check(Schema.isMaxCodePoints(254)),
  Schema.check(Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/u, { message: "must be an e-mail address" }))
)

/**
 * A schema's JSON Schema (draft 2020-12) as one document: the root with its definitions under
 * `$defs`, where references point (`#/$defs/…`). 4.x's toJsonSchemaDocument returns them apart.
 */
/**
 * Rewrites, in place, every JSON Schema node of a QueryNumber (a string whose `allOf` holds the
 * number's schema) to the number's schema: on the wire it is text either way, and the number, with
 * its bounds, is what a client must send (an MCP call or a query string carries its digits).
 */
export const liftQueryNumbers = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(liftQueryNumbers)
  if (typeof node !== "object" || node === null) return
  const record = node as Record<string, unknown>
  for (const value of Object.values(record)) liftQueryNumbers(value)
  if (record.type !== "string" || !Array.isArray(record.allOf) || record.allOf.length !== 1) return
  const numeric: unknown = record.allOf[0]
  if (typeof numeric !== "object" || numeric === null) return
  if (!("type" in numeric) || (numeric.type !== "integer" && numeric.type !== "number")) return
  delete record.allOf
  Object.assign(record, numeric)
}

export const jsonSchemaOf = (schema: Schema.Top): Record<string, unknown> => {
  const doc = Schema.toJsonSchemaDocument(schema)
  liftQueryNumbers(doc)
  const defs = doc.definitions ?? {}
  return Object.keys(defs).length > 0
    ? { ...(doc.schema as object), $defs: defs }
    : (doc.schema as Record<string, unknown>)
}
