// Human-readable site pages (home, for AI agents, integrations, terms, whitepaper, legal guide) in
// English and Brazilian Portuguese.
import { html as h, type Html, type Part } from "./templates/html.js"
import { type Lang, layout as siteLayout, pageNames, type PageName } from "./templates/layout.js"
import { contentPage } from "./templates/content.js"

// The language a page is served in is picked in ./lang.ts.
export type { Lang }

// ---------------------------------------------------------------------------
// Context and page names
// ---------------------------------------------------------------------------

export interface SiteContext {
  readonly baseUrl: string
  readonly platformName: string
  readonly version: string
  /** The Agent API's per-key limits (AppConfig rateLimitPerMinute / rateLimitPerDay). */
  readonly rateLimitPerMinute: number
  readonly rateLimitPerDay: number
  /** The payment processor this process is configured with (AppConfig payments): the integrations page names it. */
  readonly payments: "fake" | "stripe"
}

export { pageNames, type PageName }

// Per-render helpers bound to the context.
interface Site {
  readonly lang: Lang
  readonly base: string
  readonly name: string
  readonly version: string
  /** The per-key rate limits, formatted for the page's language (1,000 / 1.000). */
  readonly perMinute: string
  readonly perDay: string
  readonly payments: "fake" | "stripe"
  /** Absolute address for a path on this site. */
  readonly u: (path: string) => string
  /** Link whose visible text is the absolute address itself. */
  readonly a: (path: string) => Html
  /** Link with custom text. */
  readonly link: (path: string, text: Part) => Html
  /** Link to one of the five site pages, keeping the current language. */
  readonly page: (name: PageName, text: Part) => Html
}

const numberLocale: Readonly<Record<Lang, string>> = { en: "en-US", pt: "pt-BR" }

const makeSite = (lang: Lang, ctx: SiteContext): Site => {
  const base = ctx.baseUrl.trim().replace(/\/+$/, "")
  const u = (path: string): string => base + path
  return {
    lang,
    base,
    name: ctx.platformName,
    version: ctx.version,
    perMinute: ctx.rateLimitPerMinute.toLocaleString(numberLocale[lang]),
    perDay: ctx.rateLimitPerDay.toLocaleString(numberLocale[lang]),
    payments: ctx.payments,
    u,
    a: (path) => h`<a href="${u(path)}">${u(path)}</a>`,
    link: (path, text) => h`<a href="${u(path)}">${text}</a>`,
    page: (name, text) => h`<a href="${u(`/${name}?lang=${lang}`)}">${text}</a>`
  }
}

const c = (text: string): Html => h`<code>${text}</code>`

// Focusable: a long line scrolls the block sideways, and a keyboard user must be able to scroll it.
const codeBlock = (text: string): Html => h`<pre tabindex="0"><code>${text}</code></pre>`

interface PageContent {
  readonly title: string
  readonly description: string
  readonly body: Html
}

type PageBuilder = (s: Site) => PageContent

// ---------------------------------------------------------------------------
// Shared data
// ---------------------------------------------------------------------------

const machineLinks: ReadonlyArray<{ readonly path: string; readonly en: string; readonly pt: string }> = [
  { path: "/api/discover", en: "discovery document (JSON)", pt: "documento de descoberta (JSON)" },
  {
    path: "/llms.txt",
    en: "plain-text description of the platform for language models",
    pt: "descrição da plataforma em texto simples para modelos de linguagem"
  },
  {
    path: "/api/v1/agent/openapi.json",
    en: "OpenAPI description of the Agent API",
    pt: "descrição OpenAPI da API de agentes"
  },
  { path: "/api/v1/agent/mcp-tools.json", en: "list of MCP tools", pt: "lista de ferramentas MCP" },
  {
    path: "/.well-known/mcp.json",
    en: "MCP (Model Context Protocol) manifest",
    pt: "manifesto MCP (Model Context Protocol)"
  },
  { path: "/.well-known/ai-plugin.json", en: "AI plugin manifest", pt: "manifesto de plugin de IA" },
  { path: "/docs", en: "human-readable API documentation", pt: "documentação da API para leitura humana" }
]

const quickStartLabels: Readonly<Record<Lang, ReadonlyArray<string>>> = {
  en: [
    "# 1. Discover the platform (no key needed)",
    "# 2. Check your key and its permissions",
    "# 3. Browse the catalog",
    "# 4. Discover AI services and buy one",
    "<your key>",
    "<service id>",
    "<tier id>"
  ],
  pt: [
    "# 1. Descubra a plataforma (sem chave)",
    "# 2. Verifique sua chave e as permissões dela",
    "# 3. Navegue pelo catálogo",
    "# 4. Descubra serviços de IA e compre um",
    "<sua chave>",
    "<id do serviço>",
    "<id do nível>"
  ]
}

// Plain text; escaped when placed in the page.
const quickStart = (s: Site): string => {
  const [step1, step2, step3, step4, key, service, tier] = quickStartLabels[s.lang]
  const agent = s.u("/api/v1/agent")
  const commerce = s.u("/api/v1/agent/commerce")
  return [
    step1,
    `curl ${s.u("/api/discover")}`,
    "",
    step2,
    `export API_KEY="${key}"`,
    `curl -H "Authorization: Bearer $API_KEY" ${agent}/me`,
    "",
    step3,
    `curl -H "Authorization: Bearer $API_KEY" ${agent}/catalog`,
    "",
    step4,
    `curl -H "Authorization: Bearer $API_KEY" ${commerce}/services`,
    `curl -X POST ${commerce}/buy \\`,
    '  -H "Authorization: Bearer $API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '{"serviceId":"${service}","tierId":"${tier}","input":{}}'`
  ].join("\n")
}

// The integrations page (content/integrations.*.md) lists only what this process runs: the payment
// processor it is configured with (this item), the APIs it serves, webhooks; the one announced
// integration (MPP crypto methods) is marked as not yet available. No sign-in provider or chat
// integration is listed, because none is implemented (docs/keys.md says where an OpenID Connect
// sign-in would plug in).
const paymentsItem = (s: Site, lang: Lang) =>
  s.payments === "stripe"
    ? lang === "en"
      ? {
          name: "Stripe payments",
          text: "subscriptions, project acquisitions, wallet recharges and knowledge products are paid through Stripe's hosted checkout; card details are entered on Stripe's pages, not on ours."
        }
      : {
          name: "Pagamentos com Stripe",
          text: "assinaturas, aquisições de projetos, recargas de carteira e produtos de conhecimento são pagos pelo checkout hospedado da Stripe; os dados do cartão são informados nas páginas da Stripe, não nas nossas."
        }
    : lang === "en"
      ? {
          name: "Test payments (fake processor)",
          text: "this deployment runs a simulated payment processor: checkouts open a test page on this site, no card is charged and no money moves. With Stripe configured, the same checkouts go to Stripe."
        }
      : {
          name: "Pagamentos de teste (processador simulado)",
          text: "esta instalação usa um processador de pagamentos simulado: os checkouts abrem uma página de teste neste site, nenhum cartão é cobrado e nenhum dinheiro é movimentado. Com a Stripe configurada, os mesmos checkouts vão para a Stripe."
        }

// ---------------------------------------------------------------------------
// Page: home (/)
// ---------------------------------------------------------------------------

const agentFileLinks: ReadonlyArray<{ readonly path: string; readonly en: string; readonly pt: string }> = [
  ...machineLinks,
  { path: "/.well-known/agent-card.json", en: "A2A agent card", pt: "cartão de agente A2A" },
  { path: "/invest/api", en: "investment API description (JSON)", pt: "descrição da API de investimento (JSON)" },
  { path: "/sitemap.xml", en: "sitemap", pt: "mapa do site" },
  { path: "/robots.txt", en: "crawler rules", pt: "regras para robôs de busca" }
]

const homeEn: PageBuilder = (s) => ({
  title: "Home",
  description: `${s.name}: build, market and monetize small software products with AI — for people and for AI agents.`,
  body: h`
<h1>${s.name}</h1>
<p class="lead">Build, market and monetize small software products with AI assistance. A marketplace of templates (creators keep 85%), subscription plans, a utility-token investment facility, and APIs made for autonomous AI agents.</p>

<section id="people">
<h2>For people</h2>
<ul>
<li>${s.page("integrations", "Integrations")} — what the platform connects to.</li>
<li>${s.page("whitepaper", "Whitepaper")} — the marketplace, plans, token and governance.</li>
<li>${s.link("/agent-dashboard", "Agent dashboard")} — create agents and their API keys.</li>
<li>${s.link("/docs", "API documentation")} — every endpoint, readable.</li>
</ul>
</section>

<section id="agents">
<h2>For AI agents</h2>
<p>Start at ${s.page("for-ai-agents", "For AI agents")}, or read the machine-readable files:</p>
<ul>
${agentFileLinks.map((l) => h`<li>${s.a(l.path)} — ${l.en}</li>\n`)}</ul>
<p>Agent API v1: ${c(s.u("/api/v1/agent"))}. AI2AIC commerce protocol 1.0.0: ${c(s.u("/api/v1/agent/commerce"))}. Both take ${c("Authorization: Bearer <key>")}.</p>
</section>

<section id="legal">
<h2>Legal</h2>
<p>The platform token is a utility token, <strong>not a security</strong>; jurisdictions Brazil and Paraguay. Projections are estimates, not investment advice. See the ${s.page("terms", "terms")} and the ${s.page("legal-guide", "legal guide")}.</p>
</section>
`
})

const homePt: PageBuilder = (s) => ({
  title: "Início",
  description: `${s.name}: crie, divulgue e monetize pequenos produtos de software com IA — para pessoas e para agentes de IA.`,
  body: h`
<h1>${s.name}</h1>
<p class="lead">Crie, divulgue e monetize pequenos produtos de software com ajuda de IA. Um marketplace de templates (os criadores ficam com 85%), planos de assinatura, investimento com token utilitário e APIs feitas para agentes de IA autônomos.</p>

<section id="people">
<h2>Para pessoas</h2>
<ul>
<li>${s.page("integrations", "Integrações")} — com o que a plataforma se conecta.</li>
<li>${s.page("whitepaper", "Whitepaper")} — o marketplace, os planos, o token e a governança.</li>
<li>${s.link("/agent-dashboard", "Painel de agentes")} — crie agentes e suas chaves de API.</li>
<li>${s.link("/docs", "Documentação da API")} — todos os endpoints, para leitura.</li>
</ul>
</section>

<section id="agents">
<h2>Para agentes de IA</h2>
<p>Comece em ${s.page("for-ai-agents", "Para agentes de IA")}, ou leia os arquivos legíveis por máquina:</p>
<ul>
${agentFileLinks.map((l) => h`<li>${s.a(l.path)} — ${l.pt}</li>\n`)}</ul>
<p>API de agentes v1: ${c(s.u("/api/v1/agent"))}. Protocolo de comércio AI2AIC 1.0.0: ${c(s.u("/api/v1/agent/commerce"))}. Ambos usam ${c("Authorization: Bearer <chave>")}.</p>
</section>

<section id="legal">
<h2>Aviso legal</h2>
<p>O token da plataforma é um token utilitário e <strong>não é um valor mobiliário</strong>; jurisdições Brasil e Paraguai. As projeções são estimativas e não constituem recomendação de investimento. Veja os ${s.page("terms", "termos")} e o ${s.page("legal-guide", "guia jurídico")}.</p>
</section>
`
})

/** A long-form page: its Markdown (content/<name>.<language>.md) filled with this server's values. */
export const renderPage = (name: PageName, lang: Lang, ctx: SiteContext): string => {
  const s = makeSite(lang, ctx)
  const payments = paymentsItem(s, lang)
  const content = contentPage(name, lang, {
    text: { name: s.name, version: s.version, perMinute: s.perMinute, perDay: s.perDay },
    url: s.u,
    page: (target) => s.u(`/${target}?lang=${lang}`),
    blocks: { quickstart: codeBlock(quickStart(s)), payments: h`<strong>${payments.name}</strong> — ${payments.text}` }
  })
  return layout(s, content, `/${name}`, name)
}

/** The home page (`/`): what the platform is and where everything lives. */
export const renderHome = (lang: Lang, ctx: SiteContext): string => {
  const s = makeSite(lang, ctx)
  return layout(s, (lang === "pt" ? homePt : homeEn)(s), "/", undefined)
}

/** A public page in the shared layout: absolute addresses, the language kept in every link. */
const layout = (s: Site, content: PageContent, path: string, name: PageName | undefined): string =>
  siteLayout({
    lang: s.lang,
    title: `${content.title} · ${s.name}`,
    description: content.description,
    platformName: s.name,
    version: s.version,
    href: s.u,
    langInLinks: true,
    ...(name ? { current: name } : {}),
    versions: { en: s.u(`${path}?lang=en`), pt: s.u(`${path}?lang=pt`) },
    main: content.body
  })
