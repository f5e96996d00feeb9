// The one page layout every HTML page of the site uses: the document head, the header with the
// brand and the main navigation, the main element, and the footer. Public pages pass absolute
// addresses (built from BASE_URL) and a language; the dashboard pages pass root-relative ones,
// because they must stay on the host the owner signed in at.
import { type Part, html, type Html } from "./html.js"

export type Lang = "en" | "pt"
export const htmlLang: Readonly<Record<Lang, string>> = { en: "en", pt: "pt-BR" }

/** The five public pages, in navigation order. */
export type PageName = "for-ai-agents" | "integrations" | "terms" | "whitepaper" | "legal-guide"
export const pageNames: ReadonlyArray<PageName> = [
  "for-ai-agents",
  "integrations",
  "terms",
  "whitepaper",
  "legal-guide"
]
export type NavTarget = PageName | "agent-dashboard" | "docs"

export const navLabels: Readonly<Record<Lang, Readonly<Record<NavTarget, string>>>> = {
  en: {
    "for-ai-agents": "For AI agents",
    integrations: "Integrations",
    terms: "Terms",
    whitepaper: "Whitepaper",
    "legal-guide": "Legal guide",
    "agent-dashboard": "Agent dashboard",
    docs: "Docs"
  },
  pt: {
    "for-ai-agents": "Para agentes de IA",
    integrations: "Integrações",
    terms: "Termos",
    whitepaper: "Whitepaper",
    "legal-guide": "Guia jurídico",
    "agent-dashboard": "Painel de agentes",
    docs: "Documentação"
  }
}

const chrome: Readonly<Record<Lang, { readonly mainNav: string; readonly langNav: string; readonly footer: string }>> =
  {
    en: { mainNav: "Main", langNav: "Language", footer: "Machine-readable" },
    pt: { mainNav: "Principal", langNav: "Idioma", footer: "Legível por máquina" }
  }

export interface LayoutOptions {
  readonly lang: Lang
  /** The whole <title>. */
  readonly title: string
  readonly description?: string
  readonly platformName: string
  readonly version: string
  /** An address on this site for a path: absolute from BASE_URL, or the path itself. */
  readonly href: (path: string) => string
  /** Public pages keep the language in their links (?lang=); the dashboard is English only. */
  readonly langInLinks: boolean
  /** The page this is, marked in the navigation. */
  readonly current?: NavTarget
  /** The language versions of this page (public pages): canonical, alternates and the switch. */
  readonly versions?: Readonly<Record<Lang, string>>
  /** Something the header shows beside the brand (who is signed in). */
  readonly headerExtra?: Html
  readonly referrer?: "no-referrer" | "same-origin"
  readonly noindex?: boolean
  /** The processor's hosted page and the return pages: no site navigation or footer. */
  readonly bare?: boolean
  readonly wide?: boolean
  readonly bodyClass?: string
  readonly stylesheets?: ReadonlyArray<string>
  readonly scripts?: ReadonlyArray<string>
  readonly main: Part
}

export const layout = (o: LayoutOptions): string => {
  const { lang, href } = o
  const labels = navLabels[lang]
  const linkTo = (target: NavTarget): string =>
    target === "agent-dashboard" || target === "docs" || !o.langInLinks
      ? href(`/${target}`)
      : href(`/${target}?lang=${lang}`)
  const navItem = (target: NavTarget): Html =>
    target === o.current
      ? html`<li><a href="${linkTo(target)}" aria-current="page">${labels[target]}</a></li>\n`
      : html`<li><a href="${linkTo(target)}">${labels[target]}</a></li>\n`
  const versions = o.versions
  const langItem = (l: Lang, text: string): Html | undefined =>
    versions === undefined
      ? undefined
      : l === lang
        ? html`<a href="${versions[l]}" hreflang="${htmlLang[l]}" lang="${htmlLang[l]}" aria-current="true">${text}</a>`
        : html`<a href="${versions[l]}" hreflang="${htmlLang[l]}" lang="${htmlLang[l]}">${text}</a>`
  const wrap = o.wide ? "wrap wide" : "wrap"
  const inLang = (path: string) => (o.langInLinks ? href(`${path}?lang=${lang}`) : href(path))

  const head = html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
${o.referrer ? html`<meta name="referrer" content="${o.referrer}">\n` : ""}${o.noindex ? html`<meta name="robots" content="noindex">\n` : ""}<title>${o.title}</title>
${o.description ? html`<meta name="description" content="${o.description}">\n` : ""}${
    versions
      ? html`<link rel="canonical" href="${versions[lang]}">
<link rel="alternate" hreflang="en" href="${versions.en}">
<link rel="alternate" hreflang="pt-BR" href="${versions.pt}">
`
      : ""
  }<link rel="icon" href="${href("/assets/logo.svg")}" type="image/svg+xml">
${(o.stylesheets ?? ["/assets/site.css"]).map((s) => html`<link rel="stylesheet" href="${href(s)}">\n`)}${(
    o.scripts ?? []
  ).map((s) => html`<script src="${href(s)}" defer></script>\n`)}`

  const header = html`<header class="site-header">
<div class="${wrap} bar">
<a class="brand" href="${inLang("/")}">${o.platformName}</a>
${versions ? html`<nav class="lang-switch" aria-label="${chrome[lang].langNav}">${langItem("en", "English")} <span aria-hidden="true">|</span> ${langItem("pt", "Português (Brasil)")}</nav>\n` : ""}${o.headerExtra ?? ""}
</div>
<nav class="${wrap} site-nav" aria-label="${chrome[lang].mainNav}">
<ul>
${pageNames.map(navItem)}${navItem("agent-dashboard")}${navItem("docs")}</ul>
</nav>
</header>
`
  const footer = html`<footer class="site-footer">
<div class="${wrap}">
<p>${o.platformName} · v${o.version} · AI2AIC 1.0.0</p>
<p>${chrome[lang].footer}: <a href="${href("/api/discover")}">/api/discover</a> · <a href="${href("/llms.txt")}">/llms.txt</a> · <a href="${href(
    "/api/v1/agent/openapi.json"
  )}">OpenAPI</a> · <a href="${href("/.well-known/mcp.json")}">MCP</a></p>
<p><a href="${linkTo("terms")}">${labels.terms}</a> · <a href="${linkTo("legal-guide")}">${labels["legal-guide"]}</a></p>
</div>
</footer>
`
  return html`<!DOCTYPE html>
<html lang="${htmlLang[lang]}">
<head>
${head}</head>
<body${o.bodyClass ? html` class="${o.bodyClass}"` : ""}>
${o.bare ? "" : header}<main class="${wrap}" id="main">
${o.main}
</main>
${o.bare ? "" : footer}</body>
</html>
`.value
}
