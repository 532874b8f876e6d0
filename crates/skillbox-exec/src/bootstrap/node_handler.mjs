// skillbox handler bootstrap for JavaScript tools (ES modules).
// Mode "once": read one request {handler, args} from stdin, answer on stdout, exit.
// Mode "serve": answer one JSON request per stdin line, one JSON answer per stdout line.
// Handler output written with console.log goes to stderr so it cannot corrupt answers.
import { mkdirSync, rmSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

const answer = process.stdout.write.bind(process.stdout);
console.log = console.info = console.debug = (...parts) => console.error(...parts);

const modules = new Map();

// The call's own folder, made by the worker itself (as the sandbox user). Whatever an earlier
// handler left at that name goes first; rmSync removes a symlink, not what it points to.
async function call(request) {
  const workDir = request.workDir;
  if (workDir) {
    try {
      rmSync(workDir, { recursive: true, force: true });
      mkdirSync(workDir, { mode: 0o700 });
    } catch (error) {
      return { error: "cannot create the call's work folder: " + error.message };
    }
  }
  try {
    return await callHandler(request);
  } finally {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  }
}

async function callHandler(request) {
  try {
    let module = modules.get(request.handler);
    if (!module) {
      module = await import(pathToFileURL(request.handler).href);
      modules.set(request.handler, module);
    }
    const handler = typeof module.default === "function" ? module.default : module.handler;
    if (typeof handler !== "function") {
      return { error: "the handler module has no default export function (export default async function handler(args))" };
    }
    const result = await handler(request.args);
    return { ok: result === undefined ? null : result };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function encode(id, outcome) {
  try {
    return JSON.stringify({ id, ...outcome }) + "\n";
  } catch (error) {
    return JSON.stringify({ id, error: "the handler returned a value that is not JSON-serializable: " + error.message }) + "\n";
  }
}

if (process.argv[2] === "serve") {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      answer(encode(null, { error: "bad request: " + error.message }));
      continue;
    }
    answer(encode(request.id, await call(request)));
  }
} else {
  let input = "";
  for await (const chunk of process.stdin) input += chunk;
  const request = JSON.parse(input);
  answer(encode(request.id ?? 0, await call(request)));
}
