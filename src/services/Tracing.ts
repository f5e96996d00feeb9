// Spans on service methods, paid for only when tracing is on. `traced(name)` is Effect.withSpan
// without the per-span stack trace, skipped entirely while the fiber's tracer is disabled: a span
// copies the whole service context (≈ 50 entries) to provide its parent span, which cost 15–25 %
// of a purchase's throughput with no exporter configured (docs/performance.md). The application
// disables the tracer (src/layers/app.ts) until an exporter is plugged in; tests keep it on, so
// the spanned path is the one they run.
import { Effect, FiberRef, type Tracer } from "effect"


export const traced =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const spanned = Effect.withSpan(self, name, { ...options, captureStackTrace: false })
    return Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) => (enabled ? spanned : self))
  }
