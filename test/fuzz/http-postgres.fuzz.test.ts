// HTTP fuzz on Postgres (a fresh database; skipped with the reason without TEST_DATABASE_URL): the
// same suite as the memory run, where NUL bytes, out-of-range numbers and encodings meet the database.
import { fuzzSuite } from "./suite.js"

fuzzSuite("postgres")
