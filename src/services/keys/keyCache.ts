// The per-process authentication cache (docs/keys.md): secret hash → the key and its agent, with
// the key id's hash kept beside it so a revocation can evict the entry.
import type { Caller } from "./Caller.js"
import type { KeyWithAgent } from "./KeysStore.js"

/**
 * An entry lives at most this long, so a revocation another process made reaches this one within
 * it even when its notification is lost; a revocation made here, or notified, evicts the key at once.
 */
export const KEY_CACHE_TTL_MS = 1_000
/** Cached keys per process (the oldest entry makes room). */
export const KEY_CACHE_MAX = 10_000

export interface CachedKey {
  found: KeyWithAgent
  readonly until: number
  /** The caller the key authenticates as, made on the entry's first use (its permission set included). */
  caller?: Caller
}

export const makeKeyCache = () => {
  const byHash = new Map<string, CachedKey>()
  const hashOfKey = new Map<string, string>()
  const remember = (hash: string, entry: CachedKey) => {
    byHash.delete(hash)
    if (byHash.size >= KEY_CACHE_MAX) {
      const oldest = byHash.keys().next().value
      if (oldest !== undefined) {
        const evicted = byHash.get(oldest)
        byHash.delete(oldest)
        if (evicted) hashOfKey.delete(evicted.found.key.id)
      }
    }
    byHash.set(hash, entry)
    hashOfKey.set(entry.found.key.id, hash)
  }
  const forget = (keyId: string) => {
    const hash = hashOfKey.get(keyId)
    if (hash !== undefined) byHash.delete(hash)
    hashOfKey.delete(keyId)
  }
  /** The entry of a key id, whatever its age. */
  const ofKey = (keyId: string) => {
    const hash = hashOfKey.get(keyId)
    return hash !== undefined ? byHash.get(hash) : undefined
  }
  return { get: (hash: string) => byHash.get(hash), remember, forget, ofKey }
}
