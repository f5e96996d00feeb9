// The test processes' shared image of a migrated embedded store (test/fixtures/imageCache.ts): what
// the run is promised is one image made once however many processes ask for it at once, the same
// bytes for each, a lock left by a dead process taken over rather than waited on, and an image of
// older sources never handed out.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { imageKey, sharedImage } from "./fixtures/imageCache.js"

const folders: Array<string> = []
const folder = () => {
  const made = mkdtempSync(path.join(tmpdir(), "image-cache-"))
  folders.push(made)
  return made
}
afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true })
})

const bytesOf = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer
const textOf = (bytes: ArrayBuffer) => new TextDecoder().decode(bytes)

/** A maker that counts its calls and takes a while, as the real one (~6 s) does. */
const counted = (text: string, ms = 200) => {
  const maker = {
    calls: 0,
    make: async () => {
      maker.calls++
      await new Promise((resolve) => setTimeout(resolve, ms))
      return bytesOf(text)
    }
  }
  return maker
}

describe("the shared test image", () => {
  it("is made once for callers asking at the same time, and each gets its bytes; a later caller reads it", async () => {
    const at = folder()
    const maker = counted("image one")
    const got = await Promise.all([1, 2, 3].map(() => sharedImage("aaaa", maker.make, at)))
    expect(got.map(textOf)).toEqual(["image one", "image one", "image one"])
    expect(maker.calls).toBe(1)
    const later = counted("never made")
    expect(textOf(await sharedImage("aaaa", later.make, at))).toBe("image one")
    expect(later.calls).toBe(0)
    expect(readdirSync(at)).toEqual(["embedded-image-aaaa.tar"])
  })

  it("takes over a lock whose process is dead instead of waiting it out", async () => {
    const at = folder()
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid
    writeFileSync(path.join(at, "embedded-image-bbbb.tar.lock"), String(dead))
    const maker = counted("made after the dead holder", 10)
    const started = Date.now()
    expect(textOf(await sharedImage("bbbb", maker.make, at))).toBe("made after the dead holder")
    expect(maker.calls).toBe(1)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(existsSync(path.join(at, "embedded-image-bbbb.tar.lock"))).toBe(false)
  })

  it("waits for a live holder's image rather than making a second one, however long the holder takes", async () => {
    const at = folder()
    // The holder makes its image only when the test lets it: no timing decides who holds the lock.
    let finish: (bytes: ArrayBuffer) => void = () => undefined
    let firstCalls = 0
    const holding = sharedImage(
      "cccc",
      () => {
        firstCalls++
        return new Promise<ArrayBuffer>((resolve) => (finish = resolve))
      },
      at
    )
    // The lock is taken before sharedImage first yields, so this caller finds it held.
    const second = counted("a second image")
    const waiting = sharedImage("cccc", second.make, at)
    expect(firstCalls).toBe(1)
    finish(bytesOf("the holder's image"))
    expect(textOf(await waiting)).toBe("the holder's image")
    expect(textOf(await holding)).toBe("the holder's image")
    expect(second.calls).toBe(0)
  })

  it("never hands out an image of other sources: a new key makes its own, and the old one is removed", async () => {
    const at = folder()
    await sharedImage("dddd", counted("old sources").make, at)
    const maker = counted("new sources", 10)
    expect(textOf(await sharedImage("eeee", maker.make, at))).toBe("new sources")
    expect(maker.calls).toBe(1)
    expect(readdirSync(at)).toEqual(["embedded-image-eeee.tar"])
  })

  it("names the image by its sources: a migration edited or added, the slimming fixture or a package changed, a new name", () => {
    const project = folder()
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true })
      writeFileSync(path.join(project, file), text)
    }
    write("src/layers/storage/postgres/migrations/0001_a.ts", "CREATE TABLE a ()")
    write("test/fixtures/db.ts", "slim")
    write("package-lock.json", '{ "pglite": "0.5.14" }')
    const keys = [imageKey(project)]
    expect(imageKey(project)).toBe(keys[0])
    write("src/layers/storage/postgres/migrations/0001_a.ts", "CREATE TABLE a (id int)")
    keys.push(imageKey(project))
    write("src/layers/storage/postgres/migrations/0002_b.ts", "CREATE TABLE b ()")
    keys.push(imageKey(project))
    write("test/fixtures/db.ts", "slimmer")
    keys.push(imageKey(project))
    write("package-lock.json", '{ "pglite": "0.5.15" }')
    keys.push(imageKey(project))
    expect(new Set(keys).size).toBe(keys.length)
    expect(imageKey()).toMatch(/^[0-9a-f]{16}$/)
  })
})
