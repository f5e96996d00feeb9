// Postgres store for the knowledge products and the knowledge base (JSON documents decoded with
// their schemas).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"
import { KnowledgeStore } from "../../services/knowledge/KnowledgeStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"

/** The `data` documents of the rows, decoded with `schema`; a document that does not match is a defect. */
const decodeAll =
  <A, I>(schema: Schema.Codec<A, I>) =>
  (rows: ReadonlyArray<{ data: unknown }>) =>
    Effect.orDie(Schema.decodeUnknownEffect(Schema.Array(schema))(rows.map((r) => r.data)))

export const PgKnowledgeStore = Layer.effect(
  KnowledgeStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      listProducts: orUnavailable(
        sql<{ data: unknown }>`SELECT data FROM knowledge_products ORDER BY id`.pipe(
          Effect.flatMap(decodeAll(KnowledgeProduct))
        )
      ),
      upsertProducts: (rows) =>
        orUnavailable(
          Effect.forEach(
            rows,
            (p) =>
              sql`INSERT INTO knowledge_products (id, slug, price_in_cents, currency, is_active, data)
                  VALUES (${p.id}, ${p.slug}, ${p.priceInCents}, ${p.currency}, ${p.isActive},
                    ${JSON.stringify(Schema.encodeSync(KnowledgeProduct)(p))}::jsonb)
                  ON CONFLICT (id) DO UPDATE SET slug = EXCLUDED.slug, price_in_cents = EXCLUDED.price_in_cents,
                    currency = EXCLUDED.currency, is_active = EXCLUDED.is_active, data = EXCLUDED.data`,
            { discard: true }
          )
        ),
      getKnowledgeBase: orUnavailable(
        sql<{ data: unknown }>`SELECT data FROM knowledge_base WHERE id = 'current'`.pipe(
          Effect.flatMap((rows) =>
            rows.length === 0
              ? Effect.succeed(undefined)
              : Effect.orDie(Schema.decodeUnknownEffect(KnowledgeBase)(rows[0].data))
          )
        )
      ),
      putKnowledgeBase: (kb) =>
        orUnavailable(
          sql`INSERT INTO knowledge_base (id, data) VALUES ('current', ${JSON.stringify(kb)}::jsonb)
              ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data`
        ).pipe(Effect.asVoid)
    }
  })
)
