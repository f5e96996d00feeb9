// `npm run test:model -- [--ops N] [--storage memory,embedded,postgres] [--seed S] [--no-shrink]`:
// the long run of the money-path reference model (test/model/money.model.test.ts) — N generated
// operations per storage (default 10,000), as runs of up to 30 operations each, from a random seed
// unless --seed is given (printed, to replay a failure). CI runs the same test inside `npm test`
// with 12 runs and the test's fixed seed.
import { spawnSync } from "node:child_process"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    ops: { type: "string", default: "10000" },
    storage: { type: "string" },
    seed: { type: "string" },
    "no-shrink": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})
if (values.help) {
  console.log(
    "npm run test:model -- [--ops 10000] [--storage memory,embedded,postgres] [--seed S] [--no-shrink]\nPostgres needs TEST_DATABASE_URL (or DATABASE_URL); without it that storage is skipped."
  )
  process.exit(0)
}
const OPS_PER_RUN = 30
// A run draws between 15 and 30 operations (22.5 on average).
const runs = Math.ceil(Number(values.ops) / ((OPS_PER_RUN + Math.ceil(OPS_PER_RUN / 2)) / 2))
const seed = values.seed ?? String(Math.floor(Math.random() * 2 ** 31))
const env = {
  ...process.env,
  MODEL_RUNS: String(runs),
  MODEL_OPS: String(OPS_PER_RUN),
  MODEL_SEED: seed,
  ...(values.storage !== undefined ? { TEST_STORAGES: values.storage } : {}),
  ...(values["no-shrink"] ? { MODEL_SHRINK: "0" } : {})
}
console.log(
  `money model: seed ${seed}, ${runs} runs × ≤ ${OPS_PER_RUN} operations (≈ ${values.ops} operations) per storage`
)
const result = spawnSync("npx", ["vitest", "run", "test/model/money.model.test.ts", "-t", "generated runs"], {
  stdio: "inherit",
  env
})
process.exit(result.status ?? 1)
