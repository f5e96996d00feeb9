// Marketplace catalog projects built from the templates, with varied metrics (strong, weak and zero-MRR) for evaluation.
import type { CatalogProjectSeed } from "./types.js"

export const catalogProjects: ReadonlyArray<CatalogProjectSeed> = [
  {
    id: "prj_zapleads",
    templateId: "whatsapp-crm-bot",
    name: "ZapLeads",
    description: "WhatsApp lead capture and follow-up CRM for real-estate agencies in Brazil.",
    creatorName: "Mariana Costa",
    askingPriceCents: 14900000,
    metrics: { mrrCents: 620000, monthlyGrowthPct: 14, activeUsers: 1840, churnPct: 3.1, ageMonths: 18 },
    techStack: ["TypeScript", "Node.js", "PostgreSQL", "WhatsApp Cloud API"],
    createdAt: "2025-04-08T13:20:00.000Z"
  },
  {
    id: "prj_clinica_zap",
    templateId: "whatsapp-crm-bot",
    name: "ClínicaZap",
    description: "Appointment reminders and patient follow-up over WhatsApp for small dental clinics.",
    creatorName: "Rafael Almeida",
    askingPriceCents: 1900000,
    metrics: { mrrCents: 95000, monthlyGrowthPct: 6, activeUsers: 210, churnPct: 5.5, ageMonths: 9 },
    techStack: ["TypeScript", "Next.js", "Supabase", "WhatsApp Cloud API"],
    createdAt: "2025-09-14T10:05:00.000Z"
  },
  {
    id: "prj_inboxly",
    templateId: "team-inbox-hub",
    name: "Inboxly",
    description: "Shared inbox for e-commerce support teams that merges email and Instagram DMs.",
    creatorName: "Lucas Ferreira",
    askingPriceCents: 250000,
    metrics: { mrrCents: 18000, monthlyGrowthPct: -2, activeUsers: 95, churnPct: 9.5, ageMonths: 14 },
    techStack: ["TypeScript", "React", "Node.js", "Redis"],
    createdAt: "2025-06-30T16:40:00.000Z"
  },
  {
    id: "prj_helpdesk_genie",
    templateId: "ai-support-agent",
    name: "HelpDesk Genie",
    description: "AI support agent for SaaS companies that resolves tier-1 tickets from their knowledge base.",
    creatorName: "Priya Raman",
    askingPriceCents: 42000000,
    metrics: { mrrCents: 1450000, monthlyGrowthPct: 22, activeUsers: 3900, churnPct: 2.2, ageMonths: 16 },
    techStack: ["TypeScript", "Node.js", "PostgreSQL", "pgvector", "OpenAI API"],
    createdAt: "2025-05-19T08:15:00.000Z"
  },
  {
    id: "prj_resolve_bot",
    templateId: "ai-support-agent",
    name: "ResolveBot",
    description: "Early-stage support chatbot for Shopify stores, still in free beta.",
    creatorName: "Tom Becker",
    askingPriceCents: 150000,
    metrics: { mrrCents: 0, monthlyGrowthPct: 0, activeUsers: 40, churnPct: 0, ageMonths: 2 },
    techStack: ["Python", "FastAPI", "SQLite", "Shopify API"],
    createdAt: "2026-01-27T19:00:00.000Z"
  },
  {
    id: "prj_flowpilot",
    templateId: "workflow-autopilot",
    name: "FlowPilot",
    description: "No-code automations connecting spreadsheets, forms and LLM steps for marketing agencies.",
    creatorName: "Ana Beatriz Souza",
    askingPriceCents: 7500000,
    metrics: { mrrCents: 310000, monthlyGrowthPct: 11, activeUsers: 870, churnPct: 4, ageMonths: 12 },
    techStack: ["TypeScript", "Effect", "PostgreSQL", "Temporal"],
    createdAt: "2025-08-03T11:30:00.000Z"
  },
  {
    id: "prj_logoly",
    templateId: "logo-forge",
    name: "Logoly",
    description: "AI logo maker for freelancers and small shops, sold as a low-cost subscription.",
    creatorName: "Chen Wei",
    askingPriceCents: 2400000,
    metrics: { mrrCents: 142000, monthlyGrowthPct: 4, activeUsers: 2600, churnPct: 8, ageMonths: 20 },
    techStack: ["Python", "Django", "PostgreSQL", "Stable Diffusion"],
    createdAt: "2025-03-22T07:50:00.000Z"
  },
  {
    id: "prj_kit_marca",
    templateId: "brand-kit-studio",
    name: "Kit de Marca",
    description: "Brand-kit manager for Brazilian social-media freelancers and their clients.",
    creatorName: "Juliana Ribeiro",
    askingPriceCents: 380000,
    metrics: { mrrCents: 26000, monthlyGrowthPct: 1.5, activeUsers: 60, churnPct: 7.2, ageMonths: 11 },
    techStack: ["TypeScript", "Vue", "Firebase"],
    createdAt: "2025-10-09T15:10:00.000Z"
  },
  {
    id: "prj_pingwatch",
    templateId: "uptime-sentinel",
    name: "PingWatch",
    description: "Uptime, SSL and cron-job monitoring with status pages for indie developers.",
    creatorName: "Oliver Grant",
    askingPriceCents: 6200000,
    metrics: { mrrCents: 228000, monthlyGrowthPct: 5, activeUsers: 1200, churnPct: 2.8, ageMonths: 30 },
    techStack: ["Go", "PostgreSQL", "Redis", "Fly.io"],
    createdAt: "2025-02-11T09:00:00.000Z"
  },
  {
    id: "prj_edgeship",
    templateId: "edge-deploy-kit",
    name: "EdgeShip",
    description: "Branch preview deployments to edge regions for small product teams.",
    creatorName: "Sofia Martínez",
    askingPriceCents: 3500000,
    metrics: { mrrCents: 88000, monthlyGrowthPct: 35, activeUsers: 140, churnPct: 3.5, ageMonths: 4 },
    techStack: ["Rust", "TypeScript", "Docker", "Cloudflare Workers"],
    createdAt: "2025-12-02T12:45:00.000Z"
  },
  {
    id: "prj_rankwriter",
    templateId: "seo-content-engine",
    name: "RankWriter",
    description: "SEO article planner and drafting tool whose traffic fell after search ranking changes.",
    creatorName: "Daniel Okafor",
    askingPriceCents: 2100000,
    metrics: { mrrCents: 205000, monthlyGrowthPct: -8, activeUsers: 410, churnPct: 12.5, ageMonths: 26 },
    techStack: ["PHP", "Laravel", "MySQL", "OpenAI API"],
    createdAt: "2025-07-18T14:25:00.000Z"
  },
  {
    id: "prj_indica_ai",
    templateId: "referral-loop",
    name: "Indica.ai",
    description: "Referral widget for local gyms, launched last month with no paying customers yet.",
    creatorName: "Pedro Henrique Lima",
    askingPriceCents: 80000,
    metrics: { mrrCents: 0, monthlyGrowthPct: 0, activeUsers: 12, churnPct: 0, ageMonths: 1 },
    techStack: ["TypeScript", "Next.js", "Supabase"],
    createdAt: "2026-02-10T17:35:00.000Z"
  },
  {
    id: "prj_docsmith",
    templateId: "api-docs-generator",
    name: "DocSmith",
    description: "Hosted API documentation with versioning and a try-it console, free for open source.",
    creatorName: "Hannah Schmidt",
    askingPriceCents: 1400000,
    metrics: { mrrCents: 67000, monthlyGrowthPct: 9, activeUsers: 530, churnPct: 4.5, ageMonths: 10 },
    techStack: ["TypeScript", "Astro", "Node.js", "S3"],
    createdAt: "2025-09-29T10:20:00.000Z"
  },
  {
    id: "prj_pr_sentinel",
    templateId: "pr-review-bot",
    name: "PR Sentinel",
    description: "GitHub app that reviews pull requests for bugs and missing tests, popular with mid-size teams.",
    creatorName: "Arjun Mehta",
    askingPriceCents: 24000000,
    metrics: { mrrCents: 880000, monthlyGrowthPct: 17, activeUsers: 1150, churnPct: 2.5, ageMonths: 14 },
    techStack: ["TypeScript", "Node.js", "PostgreSQL", "GitHub Apps", "Anthropic API"],
    createdAt: "2025-06-05T06:55:00.000Z"
  },
  {
    id: "prj_cobranca_facil",
    templateId: "invoice-autopay",
    name: "Cobrança Fácil",
    description: "Recurring invoices and Pix/card payment retries for Brazilian service businesses.",
    creatorName: "Fernanda Oliveira",
    askingPriceCents: 9800000,
    metrics: { mrrCents: 395000, monthlyGrowthPct: 8, activeUsers: 720, churnPct: 3, ageMonths: 22 },
    techStack: ["TypeScript", "NestJS", "PostgreSQL", "Stripe"],
    createdAt: "2025-04-27T13:05:00.000Z"
  },
  {
    id: "prj_carteira_viva",
    templateId: "portfolio-tracker",
    name: "Carteira Viva",
    description: "Personal investment dashboard with many free users but very few paying subscribers.",
    creatorName: "Gustavo Pereira",
    askingPriceCents: 120000,
    metrics: { mrrCents: 9000, monthlyGrowthPct: -4, activeUsers: 320, churnPct: 15, ageMonths: 17 },
    techStack: ["Python", "Flask", "PostgreSQL", "React"],
    createdAt: "2025-08-21T20:10:00.000Z"
  },
  {
    id: "prj_ata_ai",
    templateId: "meeting-notes-ai",
    name: "Ata.ai",
    description: "Meeting transcription and summaries in Portuguese that push action items into Trello and Asana.",
    creatorName: "Camila Nunes",
    askingPriceCents: 13000000,
    metrics: { mrrCents: 540000, monthlyGrowthPct: 13, activeUsers: 2300, churnPct: 5, ageMonths: 13 },
    techStack: ["TypeScript", "Node.js", "PostgreSQL", "Whisper"],
    createdAt: "2025-07-07T09:40:00.000Z"
  },
  {
    id: "prj_habitly",
    templateId: "habit-planner",
    name: "Habitly",
    description: "Free habit tracker with a large but inactive-leaning user base and no monetization yet.",
    creatorName: "Emma Johansson",
    askingPriceCents: 200000,
    metrics: { mrrCents: 0, monthlyGrowthPct: 0, activeUsers: 1500, churnPct: 18, ageMonths: 8 },
    techStack: ["Dart", "Flutter", "Firebase"],
    createdAt: "2025-11-12T18:00:00.000Z"
  },
  {
    id: "prj_pulse_referrals",
    templateId: "referral-loop",
    name: "Pulse Referrals",
    description: "Referral and affiliate tracking for newsletter creators, growing slowly.",
    creatorName: "Liam O'Connor",
    askingPriceCents: 700000,
    metrics: { mrrCents: 41000, monthlyGrowthPct: 3, activeUsers: 75, churnPct: 6, ageMonths: 7 },
    techStack: ["Ruby", "Rails", "PostgreSQL"],
    createdAt: "2025-11-30T11:15:00.000Z"
  },
  {
    id: "prj_resumo_reuniao",
    templateId: "meeting-notes-ai",
    name: "Resumo de Reunião",
    description: "Lightweight meeting-summary bot for Google Meet, recently launched with a handful of paying teams.",
    creatorName: "Thiago Martins",
    askingPriceCents: 450000,
    metrics: { mrrCents: 12000, monthlyGrowthPct: 25, activeUsers: 30, churnPct: 0, ageMonths: 2 },
    techStack: ["TypeScript", "Node.js", "SQLite", "Google Meet API"],
    createdAt: "2026-02-24T16:50:00.000Z"
  }
]
