// Which language a page is served in: ?lang= first, then Accept-Language, then English.
import type { Lang } from "./templates/layout.js"

const langFromTag = (tag: string): Lang | undefined => {
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0]
  if (primary === "en") return "en"
  if (primary === "pt") return "pt"
  return undefined
}

// Accepts either the bare value of ?lang= ("pt", "pt-BR") or a whole query string ("?lang=pt&x=1").
const langFromQuery = (query: string | undefined): Lang | undefined => {
  if (query === undefined) return undefined
  const trimmed = query.trim().replace(/^\?/, "")
  if (trimmed === "") return undefined
  const value = trimmed.includes("=") ? new URLSearchParams(trimmed).get("lang") : trimmed
  return value === null ? undefined : langFromTag(value)
}

const langFromAcceptLanguage = (header: string | undefined): Lang | undefined => {
  if (header === undefined || header.trim() === "") return undefined
  const entries = header
    .split(",")
    .map((part, index) => {
      const [rawTag = "", ...params] = part.split(";")
      let q = 1
      for (const param of params) {
        const match = /^\s*q\s*=\s*(\S*)\s*$/i.exec(param)
        if (match !== null) {
          const parsed = Number(match[1])
          q = Number.isFinite(parsed) && match[1] !== "" ? Math.min(Math.max(parsed, 0), 1) : 0
        }
      }
      return { tag: rawTag.trim(), q, index }
    })
    .filter((entry) => entry.tag !== "" && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
  for (const entry of entries) {
    const lang = langFromTag(entry.tag)
    if (lang !== undefined) return lang
  }
  return undefined
}

export const pickLang = (query: string | undefined, acceptLanguage: string | undefined): Lang =>
  langFromQuery(query) ?? langFromAcceptLanguage(acceptLanguage) ?? "en"
