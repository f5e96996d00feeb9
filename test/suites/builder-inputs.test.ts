// Builder input checks (pure, no storage): each of the five kinds in every supported format, what is
// not what it claims refused naming the input and field, count and size limits, RFC 4180 CSV.
import { expect } from "@effect/vitest"
import { describe, it as vit } from "vitest"
import { InvalidInput } from "../../src/schema/platform/errors.js"
import { type ProjectInput } from "../../src/schema/projects/builder.js"
import { checkInput, checkInputs, parseCsv } from "../../src/services/projects/BuilderInputs.js"
import { b64, samples, input } from "../fixtures/builderInputs.js"

describe("builder inputs", () => {
  vit("accepts each of the five kinds in every supported format, and reports what it found", () => {
    const ok: Array<[ProjectInput, string]> = [
      [input("text", "text/plain", "Build a WhatsApp CRM for dentists"), "text, 33 characters"],
      [input("text", "text/markdown", b64("# Title\n\nbody"), "base64"), "text, 13 characters"],
      [input("csv", "text/csv", 'name,price\n"Widget, large",10\n"say ""hi""",2\n'), "CSV, 2 columns × 2 data rows"],
      [input("csv", "text/csv; charset=utf-8", "a\r\n1\r\n"), "CSV, 1 column × 1 data row"],
      [input("image", "image/png", samples.png), "PNG image"],
      [input("image", "image/jpeg", samples.jpeg), "JPEG image"],
      [input("image", "image/gif", samples.gif), "GIF image"],
      [input("image", "image/webp", samples.webp), "WebP image"],
      [input("pdf", "application/pdf", samples.pdf), "PDF document"],
      [input("voice", "audio/wav", samples.wav), "WAV audio"],
      [input("voice", "audio/mpeg", samples.mp3id3), "MP3 audio"],
      [input("voice", "audio/mpeg", samples.mp3sync), "MP3 audio"],
      [input("voice", "audio/ogg", samples.ogg), "Ogg audio"],
      [input("voice", "audio/webm", samples.webm), "WebM audio"],
      [input("voice", "audio/x-m4a", samples.m4a), "MP4/M4A audio"]
    ]
    for (const [i, detected] of ok) {
      const r = checkInput(i, 0)
      expect(r, `${i.kind} ${i.mediaType}`).not.toBeInstanceOf(InvalidInput)
      expect((r as { detected: string }).detected).toBe(detected)
    }
    const png = checkInput(input("image", "image/png", samples.png), 3) as {
      bytes: number
      sha256: string
      index: number
    }
    expect(png.bytes).toBe(40)
    expect(png.index).toBe(3)
    expect(png.sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  vit("refuses what is not what it claims, naming the input and field", () => {
    const bad: Array<[ProjectInput, string, RegExp]> = [
      [
        input("image", "image/png", samples.pdf),
        "inputs[2].content",
        /declared image\/png but the bytes are PDF document/
      ],
      [input("image", "image/jpeg", samples.png), "inputs[2].content", /are PNG image/],
      [input("pdf", "application/pdf", samples.png), "inputs[2].content", /are PNG image/],
      [input("voice", "audio/wav", samples.webp), "inputs[2].content", /are WebP image/],
      [
        input("voice", "audio/ogg", b64("hello world, not audio")),
        "inputs[2].content",
        /match no voice format \(starts 68 65 6c 6c 6f 20 77 6f\)/
      ],
      [
        input("image", "image/svg+xml", samples.png),
        "inputs[2].mediaType",
        /image inputs accept image\/png, image\/jpeg, image\/gif, image\/webp/
      ],
      [input("voice", "audio/flac", samples.wav), "inputs[2].mediaType", /voice inputs accept/],
      [input("pdf", "application/pdf", "%PDF-1.7", "text"), "inputs[2].encoding", /must be sent base64-encoded/],
      [input("image", "image/png", "not base64!"), "inputs[2].content", /not valid base64/],
      [input("csv", "text/csv", "a,b\n1,2\n3\n"), "inputs[2].content", /CSV row 3 has 1 columns; the header has 2/],
      [input("csv", "text/csv", 'a,b\n"open,2\n'), "inputs[2].content", /unterminated quoted field/],
      [input("csv", "text/csv", "a,b\n"), "inputs[2].content", /header row and at least one data row/],
      [input("text", "text/plain", "   \n "), "inputs[2].content", /blank/],
      [input("text", "text/plain", b64([0xc3, 0x28]), "base64"), "inputs[2].content", /not valid UTF-8/],
      [input("text", "text/plain", ""), "inputs[2].content", /empty/],
      [
        input("text", "text/plain", "x".repeat(64 * 1024 + 1)),
        "inputs[2].content",
        /65537 bytes; text inputs are limited to 65536 bytes/
      ]
    ]
    for (const [i, field, message] of bad) {
      const r = checkInput(i, 2)
      expect(r, `${i.kind} ${i.mediaType}`).toBeInstanceOf(InvalidInput)
      expect((r as InvalidInput).field).toBe(field)
      expect((r as InvalidInput).message).toMatch(message)
    }
  })

  vit("limits the count and the total size", () => {
    const many = Array.from({ length: 11 }, () => input("text", "text/plain", "hello"))
    expect((checkInputs(many) as InvalidInput).field).toBe("inputs")
    const big = b64("%PDF-" + "x".repeat(400 * 1024))
    const r = checkInputs([input("pdf", "application/pdf", big), input("pdf", "application/pdf", big)])
    expect(r).toBeInstanceOf(InvalidInput)
    expect((r as InvalidInput).field).toBe("inputs[1].content")
    expect((r as InvalidInput).message).toMatch(/together over 786432 bytes/)
  })

  vit("parses RFC 4180 CSV", () => {
    expect(parseCsv('a,"b ""q""",c\r\n1,"x\ny",3\n\n')).toEqual([
      ["a", 'b "q"', "c"],
      ["1", "x\ny", "3"]
    ])
    expect(() => parseCsv('a,"b"c\n')).toThrow(/after a closing quote/)
  })
})
