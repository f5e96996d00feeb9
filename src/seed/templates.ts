// Marketplace templates (spec §2.2): 16 templates, two in each of the 8 categories, 85%/15% revenue share.
import type { TemplateSeed } from "./types.js"

export const templates: ReadonlyArray<TemplateSeed> = [
  {
    id: "whatsapp-crm-bot",
    name: "WhatsApp CRM Bot",
    category: "Communication",
    description: "A WhatsApp bot that captures leads, tags conversations and syncs contacts into a lightweight CRM.",
    mrr_potential: "$2K–$8K/mo",
    growth_rate: "+18% MoM",
    rating: 4.7,
    price: "$29/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "team-inbox-hub",
    name: "Team Inbox Hub",
    category: "Communication",
    description:
      "A shared inbox that merges email, chat and social messages so small teams can answer customers from one place.",
    mrr_potential: "$1K–$5K/mo",
    growth_rate: "+11% MoM",
    rating: 4.3,
    price: "Free",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "ai-support-agent",
    name: "AI Support Agent",
    category: "AI & Automation",
    description:
      "An AI agent that answers support tickets from your help-center articles and escalates edge cases to a human.",
    mrr_potential: "$5K–$20K/mo",
    growth_rate: "+24% MoM",
    rating: 4.8,
    price: "$79/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "workflow-autopilot",
    name: "Workflow Autopilot",
    category: "AI & Automation",
    description:
      "A no-code automation builder that chains webhooks, spreadsheets and LLM steps into scheduled workflows.",
    mrr_potential: "$3K–$12K/mo",
    growth_rate: "+16% MoM",
    rating: 4.5,
    price: "$49/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "logo-forge",
    name: "Logo Forge",
    category: "Design & Branding",
    description:
      "An AI logo generator that produces vector logos, color palettes and font pairings from a short brand brief.",
    mrr_potential: "$1K–$6K/mo",
    growth_rate: "+9% MoM",
    rating: 4.2,
    price: "$19/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "brand-kit-studio",
    name: "Brand Kit Studio",
    category: "Design & Branding",
    description: "A brand-kit manager that keeps logos, colors and social templates consistent across a team.",
    mrr_potential: "$2K–$7K/mo",
    growth_rate: "+7% MoM",
    rating: 4.0,
    price: "$39/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "uptime-sentinel",
    name: "Uptime Sentinel",
    category: "Infrastructure",
    description: "An uptime and SSL monitor that checks endpoints every minute and alerts through email, Slack or SMS.",
    mrr_potential: "$2K–$9K/mo",
    growth_rate: "+12% MoM",
    rating: 4.6,
    price: "Free",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "edge-deploy-kit",
    name: "Edge Deploy Kit",
    category: "Infrastructure",
    description:
      "A one-click deployment pipeline that ships containers to edge regions with preview environments per branch.",
    mrr_potential: "$4K–$15K/mo",
    growth_rate: "+14% MoM",
    rating: 4.4,
    price: "$99/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "seo-content-engine",
    name: "SEO Content Engine",
    category: "Marketing & Growth",
    description:
      "A content planner that finds long-tail keywords and drafts SEO articles for human review before publishing.",
    mrr_potential: "$3K–$10K/mo",
    growth_rate: "+15% MoM",
    rating: 4.1,
    price: "$49/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "referral-loop",
    name: "Referral Loop",
    category: "Marketing & Growth",
    description:
      "A referral program widget that tracks invites, rewards customers and reports which advocates drive revenue.",
    mrr_potential: "$1K–$6K/mo",
    growth_rate: "+10% MoM",
    rating: 3.9,
    price: "$29/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "api-docs-generator",
    name: "API Docs Generator",
    category: "Developer Tools",
    description:
      "A generator that turns OpenAPI specs into searchable, versioned documentation sites with runnable examples.",
    mrr_potential: "$2K–$8K/mo",
    growth_rate: "+13% MoM",
    rating: 4.6,
    price: "Free",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "pr-review-bot",
    name: "PR Review Bot",
    category: "Developer Tools",
    description: "A code-review bot that comments on pull requests with likely bugs, missing tests and style issues.",
    mrr_potential: "$4K–$18K/mo",
    growth_rate: "+21% MoM",
    rating: 4.9,
    price: "$59/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "invoice-autopay",
    name: "Invoice Autopay",
    category: "Finance & Investment",
    description:
      "An invoicing tool that sends recurring invoices, retries failed card payments and reconciles payouts.",
    mrr_potential: "$3K–$12K/mo",
    growth_rate: "+12% MoM",
    rating: 4.4,
    price: "$39/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "portfolio-tracker",
    name: "Portfolio Tracker",
    category: "Finance & Investment",
    description:
      "A personal portfolio dashboard that aggregates brokerage and crypto balances and charts allocation over time.",
    mrr_potential: "$1K–$5K/mo",
    growth_rate: "+8% MoM",
    rating: 3.8,
    price: "$19/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "meeting-notes-ai",
    name: "Meeting Notes AI",
    category: "Productivity",
    description:
      "A meeting assistant that transcribes calls, writes summaries and pushes action items into your task tracker.",
    mrr_potential: "$3K–$14K/mo",
    growth_rate: "+19% MoM",
    rating: 4.7,
    price: "$29/mo",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  },
  {
    id: "habit-planner",
    name: "Habit Planner",
    category: "Productivity",
    description: "A habit and weekly-planning app with streaks, reminders and a calendar view for personal goals.",
    mrr_potential: "$500–$3K/mo",
    growth_rate: "+6% MoM",
    rating: 4.0,
    price: "Free",
    revenue_share_creator: "85%",
    revenue_share_platform: "15%"
  }
]
