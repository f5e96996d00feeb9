// Commerce services offered by seller agents (AI2AIC protocol): tiers, prices in integer cents, SLAs and negotiation bounds.
import type { CommerceServiceSeed } from "./types.js"

export const commerceServices: ReadonlyArray<CommerceServiceSeed> = [
  // ---- Lexica Language Labs ----
  {
    id: "svc_translate_pro",
    sellerAgentId: "agt_seller_lexica",
    name: "Translate Pro",
    description:
      "Neural machine translation between 40+ languages with glossary support, billed per request of up to 5,000 characters.",
    category: "translation",
    pricingModel: "per_call",
    tags: ["translation", "multilingual", "glossary", "pt-BR", "es", "en"],
    tiers: [
      {
        id: "standard",
        name: "Standard",
        priceCents: 2,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 900, supportWindow: "business hours UTC-3" }
      },
      {
        id: "priority",
        name: "Priority",
        priceCents: 5,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.9, p95LatencyMs: 350, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 80, counterStepPct: 20 }
  },
  {
    id: "svc_transcribe_live",
    sellerAgentId: "agt_seller_lexica",
    name: "Transcribe Live",
    description:
      "Speech-to-text for recorded and streaming audio with speaker labels and word timestamps, billed per audio minute.",
    category: "transcription",
    pricingModel: "usage_based",
    tags: ["transcription", "speech-to-text", "diarization", "audio"],
    tiers: [
      {
        id: "batch",
        name: "Batch",
        priceCents: 4,
        unit: "audio minute",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 30000, supportWindow: "business hours UTC-3" }
      },
      {
        id: "realtime",
        name: "Realtime",
        priceCents: 9,
        unit: "audio minute",
        includedUnits: null,
        sla: { uptimePct: 99.9, p95LatencyMs: 800, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 75, counterStepPct: 25 }
  },
  {
    id: "svc_doc_translate",
    sellerAgentId: "agt_seller_lexica",
    name: "Document Translation Suite",
    description: "Layout-preserving translation of PDF, DOCX and slide decks, with monthly page quotas per tier.",
    category: "translation",
    pricingModel: "tiered",
    tags: ["translation", "documents", "pdf", "docx", "layout"],
    tiers: [
      {
        id: "starter",
        name: "Starter",
        priceCents: 1900,
        unit: "month",
        includedUnits: 500,
        sla: { uptimePct: 99.0, p95LatencyMs: 12000, supportWindow: "business hours UTC-3" }
      },
      {
        id: "business",
        name: "Business",
        priceCents: 7900,
        unit: "month",
        includedUnits: 3000,
        sla: { uptimePct: 99.5, p95LatencyMs: 8000, supportWindow: "extended hours UTC-3" }
      },
      {
        id: "enterprise",
        name: "Enterprise",
        priceCents: 29900,
        unit: "month",
        includedUnits: null,
        sla: { uptimePct: 99.95, p95LatencyMs: 4000, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 70, counterStepPct: 30 }
  },
  // ---- PixelMint Studio ----
  {
    id: "svc_image_gen",
    sellerAgentId: "agt_seller_pixelmint",
    name: "PixelMint Image Generation",
    description:
      "Text-to-image generation for product shots, illustrations and social posts, billed per generated image.",
    category: "image-generation",
    pricingModel: "per_call",
    tags: ["image-generation", "text-to-image", "marketing", "illustration"],
    tiers: [
      {
        id: "draft",
        name: "Draft 512px",
        priceCents: 1,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.0, p95LatencyMs: 7000, supportWindow: "business hours UTC" }
      },
      {
        id: "standard",
        name: "Standard 1024px",
        priceCents: 4,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 5500, supportWindow: "business hours UTC" }
      },
      {
        id: "hd",
        name: "HD 2048px",
        priceCents: 12,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.9, p95LatencyMs: 4000, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 85, counterStepPct: 15 }
  },
  {
    id: "svc_brand_images",
    sellerAgentId: "agt_seller_pixelmint",
    name: "Brand Image Subscription",
    description: "Monthly subscription for on-brand images generated from your logo, palette and style references.",
    category: "image-generation",
    pricingModel: "monthly",
    tags: ["image-generation", "branding", "subscription", "style-transfer"],
    tiers: [
      {
        id: "creator",
        name: "Creator",
        priceCents: 2900,
        unit: "month",
        includedUnits: 1000,
        sla: { uptimePct: 99.5, p95LatencyMs: 7000, supportWindow: "business hours UTC" }
      },
      {
        id: "studio",
        name: "Studio",
        priceCents: 9900,
        unit: "month",
        includedUnits: 5000,
        sla: { uptimePct: 99.9, p95LatencyMs: 4500, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 70, counterStepPct: 25 }
  },
  {
    id: "svc_image_moderation",
    sellerAgentId: "agt_seller_pixelmint",
    name: "Image Safety Moderation",
    description:
      "Classifies images for nudity, violence and other policy categories with confidence scores, billed per thousand images.",
    category: "moderation",
    pricingModel: "usage_based",
    tags: ["moderation", "trust-and-safety", "image-classification"],
    tiers: [
      {
        id: "standard",
        name: "Standard",
        priceCents: 90,
        unit: "1k images",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 600, supportWindow: "business hours UTC" }
      },
      {
        id: "priority",
        name: "Priority",
        priceCents: 150,
        unit: "1k images",
        includedUnits: null,
        sla: { uptimePct: 99.95, p95LatencyMs: 250, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 80, counterStepPct: 10 }
  },
  // ---- DataGrain Analytics ----
  {
    id: "svc_extract_docs",
    sellerAgentId: "agt_seller_datagrain",
    name: "DocGrain Extraction",
    description:
      "Extracts tables, key-value fields and line items from invoices, receipts and forms into structured JSON, billed per page.",
    category: "data-extraction",
    pricingModel: "usage_based",
    tags: ["data-extraction", "ocr", "invoices", "json", "forms"],
    tiers: [
      {
        id: "standard",
        name: "Standard OCR",
        priceCents: 3,
        unit: "page",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 3500, supportWindow: "business hours UTC-5" }
      },
      {
        id: "accurate",
        name: "High Accuracy",
        priceCents: 8,
        unit: "page",
        includedUnits: null,
        sla: { uptimePct: 99.9, p95LatencyMs: 2500, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 75, counterStepPct: 20 }
  },
  {
    id: "svc_embed_vectors",
    sellerAgentId: "agt_seller_datagrain",
    name: "Vector Embeddings API",
    description:
      "Multilingual text embeddings for semantic search and RAG, with monthly token quotas measured in thousands of tokens.",
    category: "embeddings",
    pricingModel: "tiered",
    tags: ["embeddings", "semantic-search", "rag", "vectors"],
    tiers: [
      {
        id: "dev",
        name: "Developer",
        priceCents: 900,
        unit: "month",
        includedUnits: 5000,
        sla: { uptimePct: 99.0, p95LatencyMs: 400, supportWindow: "business hours UTC-5" }
      },
      {
        id: "growth",
        name: "Growth",
        priceCents: 4900,
        unit: "month",
        includedUnits: 50000,
        sla: { uptimePct: 99.5, p95LatencyMs: 250, supportWindow: "extended hours UTC-5" }
      },
      {
        id: "scale",
        name: "Scale",
        priceCents: 19900,
        unit: "month",
        includedUnits: null,
        sla: { uptimePct: 99.95, p95LatencyMs: 120, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 65, counterStepPct: 35 }
  },
  {
    id: "svc_web_scrape",
    sellerAgentId: "agt_seller_datagrain",
    name: "Structured Web Scraper",
    description:
      "Fetches a public web page and returns clean text, metadata and detected entities as JSON, billed per request.",
    category: "data-extraction",
    pricingModel: "per_call",
    tags: ["data-extraction", "scraping", "web", "json"],
    tiers: [
      {
        id: "basic",
        name: "Static HTML",
        priceCents: 2,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.0, p95LatencyMs: 2500, supportWindow: "business hours UTC-5" }
      },
      {
        id: "rendered",
        name: "JS Rendered",
        priceCents: 6,
        unit: "call",
        includedUnits: null,
        sla: { uptimePct: 99.5, p95LatencyMs: 1800, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 90, counterStepPct: 10 }
  },
  // ---- CodeWarden Systems ----
  {
    id: "svc_code_review",
    sellerAgentId: "agt_seller_codewarden",
    name: "CodeWarden PR Review",
    description:
      "Automated pull-request review that flags bugs, security issues and missing tests, with a monthly quota of reviewed pull requests.",
    category: "code-review",
    pricingModel: "monthly",
    tags: ["code-review", "security", "pull-requests", "static-analysis"],
    tiers: [
      {
        id: "team",
        name: "Team",
        priceCents: 4900,
        unit: "month",
        includedUnits: 300,
        sla: { uptimePct: 99.5, p95LatencyMs: 90000, supportWindow: "business hours UTC+1" }
      },
      {
        id: "org",
        name: "Organization",
        priceCents: 19900,
        unit: "month",
        includedUnits: 2000,
        sla: { uptimePct: 99.9, p95LatencyMs: 60000, supportWindow: "extended hours UTC+1" }
      },
      {
        id: "enterprise",
        name: "Enterprise",
        priceCents: 49900,
        unit: "month",
        includedUnits: null,
        sla: { uptimePct: 99.95, p95LatencyMs: 30000, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 60, counterStepPct: 40 }
  },
  // ---- Brevis AI Cooperative ----
  {
    id: "svc_summarize_brief",
    sellerAgentId: "agt_seller_brevis",
    name: "Brevis Summaries",
    description:
      "Summaries of long documents, threads and transcripts in bullet, abstract or executive-brief formats, with monthly document quotas.",
    category: "summarization",
    pricingModel: "tiered",
    tags: ["summarization", "documents", "meetings", "llm"],
    tiers: [
      {
        id: "lite",
        name: "Lite",
        priceCents: 1500,
        unit: "month",
        includedUnits: 1000,
        sla: { uptimePct: 99.0, p95LatencyMs: 6000, supportWindow: "business hours UTC" }
      },
      {
        id: "pro",
        name: "Pro",
        priceCents: 5900,
        unit: "month",
        includedUnits: 10000,
        sla: { uptimePct: 99.5, p95LatencyMs: 3500, supportWindow: "extended hours UTC" }
      },
      {
        id: "max",
        name: "Max",
        priceCents: 24900,
        unit: "month",
        includedUnits: null,
        sla: { uptimePct: 99.9, p95LatencyMs: 2000, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 70, counterStepPct: 30 }
  },
  {
    id: "svc_chat_moderation",
    sellerAgentId: "agt_seller_brevis",
    name: "Chat Moderation Guard",
    description:
      "Real-time moderation of chat and comment text for toxicity, spam and personal data, as a flat monthly subscription.",
    category: "moderation",
    pricingModel: "monthly",
    tags: ["moderation", "toxicity", "spam", "pii", "chat"],
    tiers: [
      {
        id: "community",
        name: "Community",
        priceCents: 1900,
        unit: "month",
        includedUnits: 100000,
        sla: { uptimePct: 99.5, p95LatencyMs: 300, supportWindow: "business hours UTC" }
      },
      {
        id: "platform",
        name: "Platform",
        priceCents: 14900,
        unit: "month",
        includedUnits: null,
        sla: { uptimePct: 99.95, p95LatencyMs: 150, supportWindow: "24/7" }
      }
    ],
    negotiation: { floorPct: 75, counterStepPct: 15 }
  }
]
