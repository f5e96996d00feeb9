// Spans on service methods, paid for only when tracing is on. `traced(name)` is Effect.withSpan,
// skipped entirely while the fiber's tracer is disabled (References.TracerEnabled): a span costs
// time on every call even with no exporter (docs/effect4.md), and the application disables the tracer
// (src/layers/app.ts) until an exporter is plugged in; tests keep it on, so the spanned path is
// the one they run.
import { Effect, References, type Tracer } from "effect"

export const traced =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    // Built only when the tracer is on, and without a stack trace: withSpan captures one (an Error)
    // as it is constructed, which showed in a purchase's profile even with the tracer off.
    return Effect.flatMap(References.TracerEnabled, (enabled) =>
      enabled ? Effect.withSpan(self, name, { ...options, captureStackTrace: false }) : self
    )
  }
