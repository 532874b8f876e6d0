#!/usr/bin/env node
// Count the words, lines and characters of a text and print them as JSON.
//
//   node scripts/example.mjs TEXT...
//   echo "some text" | node scripts/example.mjs
//
// Prints {"words": N, "lines": N, "characters": N} on stdout. Without a text it
// prints a message on stderr and exits 2.{{usage}}
import { realpathSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";

// The counts of one text: words are runs of non-space characters, characters
// are Unicode code points, and a final newline does not start a line.
export function count(text) {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return {
    words: text.split(/\s+/u).filter(Boolean).length,
    lines: text === "" ? 0 : body.split("\n").length,
    characters: Array.from(text).length,
  };
}
{{handler}}
async function main(args) {
  let text = args.join(" ");
  if (args.length === 0) {
    for await (const chunk of process.stdin) text += chunk;
  }
  if (text.trim() === "") {
    process.stderr.write("example.mjs: error: give the text as arguments or on stdin\n");
    return 2;
  }
  process.stdout.write(JSON.stringify(count(text)) + "\n");
  return 0;
}

// Run as a command only (not when a tool runner imports this module).
function runDirectly() {
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (runDirectly()) {
  process.exitCode = await main(process.argv.slice(2));
}
