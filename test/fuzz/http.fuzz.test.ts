// HTTP fuzz on the memory engine: every endpoint and procedure, schema-derived, mutated and
// hand-picked inputs; never a 5xx, always a typed 4xx for invalid input (test/fuzz/suite.ts).
import { fuzzSuite } from "./suite.js"

fuzzSuite("memory")
