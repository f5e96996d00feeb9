// How the Postgres client decodes int8 and numeric: as numbers, at the driver.
import { PgTypes } from "@effect/sql-pg"
import { Result } from "effect"

const INT8 = 20
const NUMERIC = 1700

const codecError = (message: string) => Result.fail(new PgTypes.CodecError({ message }))

/**
 * int8 (bigint, count(*)) and numeric (sum of int8) would come back from @effect/sql-pg as bigint
 * and string. Money here is integer cents far below 2^53, so both are decoded to numbers once, at
 * the driver (binary wire format), and an int8 outside the safe range is an error rather than a
 * silent rounding. Parameters bound as int8 or numeric accept numbers, bigints and numeric strings.
 */
const int8Codec: PgTypes.Codec<number | bigint | string> = {
  decode: (bytes) => {
    if (bytes.length !== 8) return codecError(`int8 of ${bytes.length} bytes`)
    const n = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0)
    return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Result.succeed(Number(n))
      : codecError(`int8 ${n} is outside the safe integer range`)
  },
  encode: (value) => {
    if (typeof value === "number" && !Number.isSafeInteger(value)) return codecError(`not an int8: ${value}`)
    let n: bigint
    try {
      n = typeof value === "bigint" ? value : BigInt(value)
    } catch {
      return codecError(`not an int8: ${String(value)}`)
    }
    const out = new Uint8Array(8)
    new DataView(out.buffer).setBigInt64(0, n)
    return Result.succeed(out)
  }
}

/** numeric, binary: ndigits, weight, sign, dscale (int16 each), then base-10000 digits. */
const numericCodec: PgTypes.Codec<number | bigint | string> = {
  decode: (bytes) => {
    if (bytes.length < 8) return codecError("numeric too short")
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
    const ndigits = view.getInt16(0)
    const weight = view.getInt16(2)
    const sign = view.getUint16(4)
    if (sign === 0xc000) return Result.succeed(Number.NaN)
    let value = 0
    for (let i = 0; i < ndigits; i++) value += view.getUint16(8 + 2 * i) * Math.pow(10000, weight - i)
    return Result.succeed(sign === 0x4000 ? -value : value)
  },
  encode: (value) =>
    PgTypes.encode(typeof value === "string" ? value : String(value), NUMERIC) as Result.Result<
      Uint8Array,
      PgTypes.CodecError
    >
}

export const types = PgTypes.makeRegistry()
types.register(INT8, int8Codec as PgTypes.Codec<unknown>)
types.register(NUMERIC, numericCodec as PgTypes.Codec<unknown>)
