// In-memory store for rate-limit counters.
import { Effect, Layer } from "effect"
import { RateLimitStore } from "../../services/keys/RateLimitStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryRateLimitStore = Layer.effect(
  RateLimitStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    // Counters are not business data: kept outside the undo journal, pruned as windows pass.
    const counters = new Map<string, number>()
    const current = new Map<string, number>()
    const k = (bucket: string, name: string, start: number) => `${bucket}|${name}|${start}`
    // The window before the current one is kept: failure throttling weighs it (a sliding window).
    const prune = (bucket: string, name: string, start: number, seconds: number) => {
      const slot = `${bucket}|${name}`
      const prev = current.get(slot)
      if (prev !== undefined && prev !== start) {
        counters.delete(k(bucket, name, prev === start - seconds ? prev - seconds : prev))
      }
      current.set(slot, start)
    }
    void db
    return {
      reserve: (bucket, windows, n) =>
        Effect.sync(() => {
          windows.forEach((w) => prune(bucket, w.name, w.start, w.seconds))
          const counts = windows.map((w) => counters.get(k(bucket, w.name, w.start)) ?? 0)
          const granted = Math.max(0, Math.min(n, ...windows.map((w, i) => w.limit - counts[i])))
          if (granted === 0) return { granted, counts }
          windows.forEach((w, i) => counters.set(k(bucket, w.name, w.start), counts[i] + granted))
          return { granted, counts: counts.map((c) => c + granted) }
        }),
      peek: (bucket, windows) => Effect.sync(() => windows.map((w) => counters.get(k(bucket, w.name, w.start)) ?? 0)),
      release: (bucket, windows, n) =>
        Effect.sync(() => {
          for (const w of windows) {
            const count = counters.get(k(bucket, w.name, w.start))
            if (count !== undefined) counters.set(k(bucket, w.name, w.start), Math.max(0, count - n))
          }
        })
    }
  })
)
