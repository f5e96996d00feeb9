// `traced`: a span around a service method while the tracer is on, nothing at all while it is off
// (the application turns it off in src/main.ts: no exporter is configured).
import { it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { describe, expect } from "vitest"
import { traced } from "../src/services/platform/Tracing.js"

const spanName = Effect.map(
  Effect.option(Effect.currentSpan),
  Option.map((s) => s.name)
)

describe("traced", () => {
  it.effect("opens a named span while the tracer is on", () =>
    Effect.gen(function* () {
      expect(yield* spanName.pipe(traced("Commerce.buy", { attributes: { x: 1 } }))).toEqual(
        Option.some("Commerce.buy")
      )
    })
  )
  it.effect("is the bare effect while the tracer is off (no span, same result, same failure)", () =>
    Effect.gen(function* () {
      expect(yield* spanName.pipe(traced("Commerce.buy"), Effect.withTracerEnabled(false))).toEqual(Option.none())
      expect(yield* Effect.succeed(42).pipe(traced("x"), Effect.withTracerEnabled(false))).toBe(42)
      expect(yield* Effect.flip(Effect.fail("no").pipe(traced("x"), Effect.withTracerEnabled(false)))).toBe("no")
    })
  )
})
