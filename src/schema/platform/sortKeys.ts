/**
 * Sorts object keys at every level, so the same JSON written in another key order is the same value
 * (a request's fingerprint for idempotency, an x402 payment's).
 */
export const sortKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortKeys)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])])
        )
      : value
