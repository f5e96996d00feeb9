// Postgres store for the marketplace catalogue: templates and plans (JSON documents decoded with their schemas).
import { SqlClient } from "effect/sql"
import { Effect, Layer, Schema } from "effect"
import { Plan, Template } from "../../schema/marketplace/marketplace.js"
import { MarketplaceStore } from "../../services/marketplace/MarketplaceStore.js"
import { orUnavailable } from "../storage/postgres/PgDb.js"

/** The `data` documents of the rows, decoded with `schema`; a document that does not match is a defect. */
const decodeAll =
  <A, I>(schema: Schema.Codec<A, I>) =>
  (rows: ReadonlyArray<{ data: unknown }>) =>
    Effect.orDie(Schema.decodeUnknownEffect(Schema.Array(schema))(rows.map((r) => r.data)))

export const PgMarketplaceStore = Layer.effect(
  MarketplaceStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      listTemplates: orUnavailable(
        sql<{ data: unknown }>`SELECT data FROM templates ORDER BY position`.pipe(Effect.flatMap(decodeAll(Template)))
      ),
      listPlans: orUnavailable(
        sql<{ data: unknown }>`SELECT data FROM plans ORDER BY price_cents`.pipe(Effect.flatMap(decodeAll(Plan)))
      ),
      upsertTemplates: (rows) =>
        orUnavailable(
          Effect.forEach(
            rows,
            (t, i) =>
              sql`INSERT INTO templates (id, position, data)
                  VALUES (${t.id}, ${i}, ${JSON.stringify(Schema.encodeSync(Template)(t))}::jsonb)
                  ON CONFLICT (id) DO UPDATE SET position = EXCLUDED.position, data = EXCLUDED.data`,
            { discard: true }
          )
        ),
      upsertPlans: (rows) =>
        orUnavailable(
          Effect.forEach(
            rows,
            (p) =>
              sql`INSERT INTO plans (id, price_cents, data)
                  VALUES (${p.id}, ${p.priceCents}, ${JSON.stringify(Schema.encodeSync(Plan)(p))}::jsonb)
                  ON CONFLICT (id) DO UPDATE SET price_cents = EXCLUDED.price_cents, data = EXCLUDED.data`,
            { discard: true }
          )
        )
    }
  })
)
