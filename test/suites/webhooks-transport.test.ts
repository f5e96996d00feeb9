// The webhook transport (pure, no storage): which addresses it refuses, the URL rules, the response
// cap, the timeouts, redirects not followed, connection errors reported.
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { connect } from "node:net"
import { describe, it as vit } from "vitest"
import { classifyAddress, isAllowedAddress } from "../../src/layers/webhooks/addresses.js"
import { makeNodeTransport, UNREACHABLE } from "../../src/layers/webhooks/WebhookTransport.node.js"
import { requirePrerequisite, skipUnlessCi } from "../fixtures/prerequisites.js"
import { startReceiver } from "../fixtures/webhookReceiver.js"

describe("webhook address policy", () => {
  vit("classifies loopback, private, link-local, CGNAT, metadata and the embedded-IPv4 forms", () => {
    const table: Array<[string, string]> = [
      ["93.184.216.34", "public"],
      ["8.8.8.8", "public"],
      ["2606:4700:4700::1111", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["169.254.10.1", "link-local"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["100.64.0.1", "cgnat"],
      ["100.127.255.254", "cgnat"],
      ["100.128.0.1", "public"],
      ["169.254.169.254", "metadata"],
      ["fd00:ec2::254", "metadata"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["ff02::1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:a9fe:a9fe", "metadata"],
      ["::ffff:10.0.0.1", "private"],
      ["64:ff9b::a9fe:a9fe", "metadata"],
      ["2002:0a00:0001::1", "private"],
      ["::ffff:8.8.8.8", "public"],
      ["not-an-ip", "invalid"]
    ]
    for (const [address, kind] of table) expect(classifyAddress(address), address).toBe(kind)
    expect(isAllowedAddress("127.0.0.1", true)).toBe(true)
    expect(isAllowedAddress("::1", true)).toBe(true)
    expect(isAllowedAddress("127.0.0.1", false)).toBe(false)
    // The loopback flag opens loopback only.
    for (const a of ["10.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "fd00:ec2::254"])
      expect(isAllowedAddress(a, true), a).toBe(false)
  })

  vit(
    "the transport refuses loopback without the flag (a name that resolves to 127.0.0.1 included), http in production",
    async () => {
      const rx = await startReceiver()
      try {
        const strict = makeNodeTransport({ allowLoopback: false, httpsOnly: false })
        for (const url of [
          `http://127.0.0.1:${rx.port}/`,
          `http://localhost:${rx.port}/`,
          `http://[::1]:${rx.port}/`,
          "http://2130706433/",
          "http://0x7f.1/"
        ]) {
          const error = await Effect.runPromise(Effect.flip(strict.check(url)))
          expect(error._tag, url).toBe("InvalidInput")
          expect(error.message, url).toMatch(/loopback/)
        }
        // …and at delivery: nothing reaches the receiver.
        const sent = await Effect.runPromise(
          strict.send({ url: `http://localhost:${rx.port}/hook`, headers: {}, body: "{}" })
        )
        expect(sent).toMatchObject({ ok: false, status: null })
        expect(sent.error).toBe(`refused: localhost ${UNREACHABLE}`)
        expect(rx.received).toHaveLength(0)

        const production = makeNodeTransport({ allowLoopback: false, httpsOnly: true })
        expect((await Effect.runPromise(Effect.flip(production.check("http://example.com/hook")))).message).toBe(
          "url must use https"
        )
        const relaxed = makeNodeTransport({ allowLoopback: true, httpsOnly: false })
        await Effect.runPromise(relaxed.check(`http://127.0.0.2:${rx.port}/`))
        for (const [url, message] of [
          ["ftp://example.com/", "url must use https (or http outside production)"],
          ["not a url", "url must be an absolute http(s) URL"],
          ["http://user:pw@example.com/", "url must not contain credentials (user:password@)"],
          ["http://example.com/#x", "url must not contain a fragment"]
        ]) {
          expect((await Effect.runPromise(Effect.flip(relaxed.check(url)))).message, url).toBe(message)
        }
      } finally {
        await rx.close()
      }
    }
  )

  vit(
    "the transport caps the response body, times out, does not follow redirects, reports connection errors",
    async () => {
      const rx = await startReceiver()
      try {
        const t = makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 400 })
        const post = () =>
          Effect.runPromise(t.send({ url: rx.url, headers: { "content-type": "application/json" }, body: "{}" }))
        // An endless body: reading stops at the cap, long before the timeout.
        let written = 0
        rx.raw = (_req, res) => {
          res.writeHead(500)
          const chunk = Buffer.alloc(16 * 1024, 120)
          const pump = () => {
            while (!res.destroyed && written < 50 * 1024 * 1024 && res.write(chunk)) written += chunk.length
            if (!res.destroyed && written < 50 * 1024 * 1024) res.once("drain", pump)
          }
          pump()
        }
        const capped = await post()
        expect(capped.ok).toBe(false)
        expect(capped.status).toBe(500)
        // The receiver's status and the start of its body, not a timeout: reading stopped at the cap.
        expect(capped.error).toMatch(/^HTTP 500: x{20}/)
        expect(written).toBeLessThan(5 * 1024 * 1024)

        rx.raw = () => {} // never answers
        const slow = await post()
        expect(slow).toMatchObject({ ok: false, status: null, error: "timed out after 400 ms" })
        expect(slow.durationMs).toBeGreaterThanOrEqual(390)

        rx.raw = (_req, res) => res.writeHead(302, { location: "http://169.254.169.254/" }).end()
        const redirect = await post()
        expect(redirect).toMatchObject({ ok: false, status: 302, error: "HTTP 302 (redirects are not followed)" })

        rx.raw = (_req, res) => res.writeHead(200).end("ok")
        expect(await post()).toMatchObject({ ok: true, status: 200, error: null })
      } finally {
        await rx.close()
      }
      const refused = await Effect.runPromise(
        makeNodeTransport({ allowLoopback: true, httpsOnly: false }).send({ url: rx.url, headers: {}, body: "{}" })
      )
      expect(refused).toMatchObject({ ok: false, status: null })
      expect(refused.error).toMatch(/ECONNREFUSED/)
    }
  )
})

/** A loopback port whose listener never accepts and whose backlog is full: further SYNs are dropped, as by a black hole. */
const blackHole = async () => {
  const py = spawn("python3", [
    "-c",
    "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)"
  ])
  const port = await new Promise<number>((resolve, reject) => {
    py.once("error", reject)
    py.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim())))
  })
  const fillers = Array.from({ length: 4 }, () => connect(port, "127.0.0.1").on("error", () => {}))
  // A backlog of 0 holds one finished handshake: once a filler is connected, further SYNs are dropped.
  await Promise.any(fillers.map((f) => new Promise((resolve) => f.once("connect", resolve))))
  return {
    port,
    close: () => {
      for (const f of fillers) f.destroy()
      py.kill()
    }
  }
}
const noPython =
  spawnSync("python3", ["-c", "pass"]).status === 0
    ? undefined
    : "python3 (the black-hole listener of the connect-timeout test) is not installed"
const pythonSkip = skipUnlessCi(noPython)

describe("webhook transport connect timeout", () => {
  vit.skipIf(pythonSkip !== undefined)(
    "an address that never completes the handshake costs the connect timeout, not the response timeout",
    async () => {
      requirePrerequisite(noPython)
      const hole = await blackHole()
      try {
        const t = makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 5_000, connectTimeoutMs: 300 })
        const sent = await Effect.runPromise(
          t.send({ url: `http://127.0.0.1:${hole.port}/hook`, headers: {}, body: "{}" })
        )
        // The connect timeout fired (its own words), not the 5 s response timeout.
        expect(sent).toMatchObject({ ok: false, status: null, error: "connect timed out after 300 ms" })
        expect(sent.durationMs).toBeGreaterThanOrEqual(290)
      } finally {
        hole.close()
      }
    }
  )
})
