// Foundation tables: marketplace templates, plans, knowledge products, knowledge base, idempotency.
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE templates (
      id text PRIMARY KEY,
      position integer NOT NULL,
      data jsonb NOT NULL
    )`
  yield* sql`
    CREATE TABLE plans (
      id text PRIMARY KEY,
      price_cents bigint NOT NULL CHECK (price_cents >= 0),
      data jsonb NOT NULL
    )`
  yield* sql`
    CREATE TABLE knowledge_products (
      id integer PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      price_in_cents bigint NOT NULL CHECK (price_in_cents >= 0),
      currency text NOT NULL,
      is_active boolean NOT NULL,
      data jsonb NOT NULL
    )`
  yield* sql`
    CREATE TABLE knowledge_base (
      id text PRIMARY KEY,
      data jsonb NOT NULL
    )`
  yield* sql`
    CREATE TABLE idempotency_keys (
      scope text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'done')),
      status integer,
      headers jsonb,
      body bytea,
      created_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (scope, key)
    )`
})
