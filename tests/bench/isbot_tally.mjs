// For tests/bench/classifier_accuracy.sh: how the npm package isbot (the pinned version in
// tests/data/agents/npm) sorts each corpus file given, one line a file: `file agents wrong`, where
// wrong is a crawler isbot does not flag (crawlers-* files) or a browser it flags (others).
// A comparison only: refgate never runs isbot, nor takes its patterns.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { isbot } = require(process.env.ISBOT_MODULE);

for (const file of process.argv.slice(2)) {
  const name = basename(file);
  const crawlers = name.startsWith("crawlers");
  const agents = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line !== "" && !line.startsWith("#"));
  const wrong = agents.filter((agent) => isbot(agent) !== crawlers).length;
  console.log(`${name} ${agents.length} ${wrong}`);
}
