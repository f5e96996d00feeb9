// Builder inputs: decoding (text or base64), size limits and a real check that each input is what
// it claims to be (magic bytes for pdf/image/audio, a strict CSV parse, valid UTF-8 for text).
import { createHash } from "node:crypto"
import { InvalidInput } from "../../schema/platform/errors.js"
import type { InputKind, InputSummary, ProjectInput } from "../../schema/projects/builder.js"

export const MAX_INPUTS = 10
/** Largest decoded size of one input, per kind (bytes). */
export const maxBytesByKind: Record<InputKind, number> = {
  text: 64 * 1024,
  csv: 256 * 1024,
  pdf: 512 * 1024,
  image: 512 * 1024,
  voice: 512 * 1024
}
/** Largest decoded size of all inputs of one request together (bytes). */
export const MAX_TOTAL_BYTES = 768 * 1024

/** Accepted media types per kind, each mapped to the format its bytes must show. */
export const mediaTypesByKind: Record<InputKind, Readonly<Record<string, string>>> = {
  text: { "text/plain": "text", "text/markdown": "text" },
  csv: { "text/csv": "csv" },
  pdf: { "application/pdf": "pdf" },
  image: { "image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp" },
  voice: {
    "audio/wav": "wav",
    "audio/wave": "wav",
    "audio/x-wav": "wav",
    "audio/mpeg": "mp3",
    "audio/ogg": "ogg",
    "audio/webm": "webm",
    "audio/mp4": "mp4",
    "audio/x-m4a": "mp4"
  }
}

const formatNames: Record<string, string> = {
  pdf: "PDF document",
  png: "PNG image",
  jpeg: "JPEG image",
  gif: "GIF image",
  webp: "WebP image",
  wav: "WAV audio",
  mp3: "MP3 audio",
  ogg: "Ogg audio",
  webm: "WebM audio",
  mp4: "MP4/M4A audio"
}

const ascii = (b: Uint8Array, offset: number, text: string) =>
  b.length >= offset + text.length && [...text].every((ch, i) => b[offset + i] === ch.charCodeAt(0))

/** The binary format the bytes show, by magic number (undefined when none matches). */
export const sniff = (b: Uint8Array): string | undefined => {
  if (ascii(b, 0, "%PDF-")) return "pdf"
  if (b.length >= 8 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => b[i] === x)) return "png"
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg"
  if (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) return "gif"
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) return "webp"
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WAVE")) return "wav"
  if (ascii(b, 0, "OggS")) return "ogg"
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return "webm"
  if (ascii(b, 4, "ftyp")) return "mp4"
  if (ascii(b, 0, "ID3")) return "mp3"
  // MPEG audio frame sync: 11 set bits, a valid version (not 01) and layer (not 00).
  if (b.length >= 4 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && ((b[1] >> 3) & 3) !== 1 && ((b[1] >> 1) & 3) !== 0)
    return "mp3"
  return undefined
}

const hex = (b: Uint8Array, n: number) => [...b.subarray(0, n)].map((x) => x.toString(16).padStart(2, "0")).join(" ")

/** Strict RFC 4180 parse (comma, double quotes, CRLF or LF). Throws a message on malformed input. */
export const parseCsv = (text: string): ReadonlyArray<ReadonlyArray<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let i = 0
  let quoted = false
  let fieldStarted = false
  const endField = () => {
    row.push(field)
    field = ""
    fieldStarted = false
  }
  const endRow = () => {
    endField()
    rows.push(row)
    row = []
  }
  while (i < text.length) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        quoted = false
        i++
        const next = text[i]
        if (next !== undefined && next !== "," && next !== "\n" && next !== "\r") {
          throw new Error(`row ${rows.length + 1}: characters after a closing quote`)
        }
        continue
      }
      field += ch
      i++
      continue
    }
    if (ch === '"') {
      if (fieldStarted || field !== "") throw new Error(`row ${rows.length + 1}: a quote inside an unquoted field`)
      quoted = true
      fieldStarted = true
      i++
    } else if (ch === ",") {
      endField()
      i++
    } else if (ch === "\r" || ch === "\n") {
      endRow()
      i += ch === "\r" && text[i + 1] === "\n" ? 2 : 1
    } else {
      field += ch
      fieldStarted = true
      i++
    }
  }
  if (quoted) throw new Error(`row ${rows.length + 1}: unterminated quoted field`)
  if (field !== "" || fieldStarted || row.length > 0) endRow()
  // Blank lines (a single empty field) are skipped.
  return rows.filter((r) => !(r.length === 1 && r[0] === ""))
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Checks one input; returns its summary or the InvalidInput naming `inputs[i].<field>`. */
export const checkInput = (input: ProjectInput, index: number): InputSummary | InvalidInput => {
  const at = (field: string) => `inputs[${index}].${field}`
  const fail = (field: string, message: string) =>
    new InvalidInput({ message: `${at(field)}: ${message}`, field: at(field) })
  const mediaType = input.mediaType.trim().toLowerCase().split(";")[0].trim()
  const accepted = mediaTypesByKind[input.kind]
  const expected = accepted[mediaType]
  if (expected === undefined) {
    return fail(
      "mediaType",
      `${input.kind} inputs accept ${Object.keys(accepted).join(", ")}; got "${input.mediaType}"`
    )
  }
  const textual = input.kind === "text" || input.kind === "csv"
  const encoding = input.encoding ?? (textual ? "text" : "base64")
  if (!textual && encoding !== "base64") return fail("encoding", `${input.kind} inputs must be sent base64-encoded`)
  let bytes: Uint8Array
  if (encoding === "base64") {
    if (input.content.length % 4 !== 0 || !BASE64.test(input.content)) return fail("content", "is not valid base64")
    bytes = Buffer.from(input.content, "base64")
  } else {
    bytes = Buffer.from(input.content, "utf8")
  }
  const limit = maxBytesByKind[input.kind]
  if (bytes.length === 0) return fail("content", "is empty")
  if (bytes.length > limit)
    return fail("content", `is ${bytes.length} bytes; ${input.kind} inputs are limited to ${limit} bytes`)

  let detected: string
  if (textual) {
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return fail("content", "is not valid UTF-8 text")
    }
    if (text.includes("\u0000")) return fail("content", "contains NUL characters; not text")
    if (input.kind === "text") {
      if (text.trim() === "") return fail("content", "is blank")
      detected = `text, ${text.length} characters`
    } else {
      let rows: ReadonlyArray<ReadonlyArray<string>>
      try {
        rows = parseCsv(text.replace(/^\uFEFF/, ""))
      } catch (e) {
        return fail("content", `is not valid CSV: ${(e as Error).message}`)
      }
      if (rows.length < 2) return fail("content", "CSV needs a header row and at least one data row")
      const columns = rows[0].length
      const bad = rows.findIndex((r) => r.length !== columns)
      if (bad >= 0)
        return fail("content", `CSV row ${bad + 1} has ${rows[bad].length} columns; the header has ${columns}`)
      detected = `CSV, ${columns} column${columns === 1 ? "" : "s"} × ${rows.length - 1} data row${rows.length === 2 ? "" : "s"}`
    }
  } else {
    const found = sniff(bytes)
    if (found !== expected) {
      return fail(
        "content",
        `declared ${mediaType} but the bytes ${found ? `are ${formatNames[found]}` : `match no ${input.kind} format (starts ${hex(bytes, 8)})`}`
      )
    }
    detected = formatNames[found]
  }
  return {
    index,
    kind: input.kind,
    mediaType,
    name: input.name ?? null,
    bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    detected
  }
}

/** Checks every input of a request (count, each input, total size). */
export const checkInputs = (inputs: ReadonlyArray<ProjectInput>): ReadonlyArray<InputSummary> | InvalidInput => {
  if (inputs.length > MAX_INPUTS) {
    return new InvalidInput({
      message: `inputs: at most ${MAX_INPUTS} inputs per project, got ${inputs.length}`,
      field: "inputs"
    })
  }
  const out: Array<InputSummary> = []
  let total = 0
  for (let i = 0; i < inputs.length; i++) {
    const r = checkInput(inputs[i], i)
    if (r instanceof InvalidInput) return r
    total += r.bytes
    if (total > MAX_TOTAL_BYTES) {
      return new InvalidInput({
        message: `inputs: together over ${MAX_TOTAL_BYTES} bytes (at inputs[${i}])`,
        field: `inputs[${i}].content`
      })
    }
    out.push(r)
  }
  return out
}
