// What the Node binding's tests share: a skill folder written per test, readable by the
// sandbox users, a scripted OpenAI-compatible model server on 127.0.0.1 (a free port)
// that loads a skill, runs its script and answers with what it printed, and the local model
// (llama-server with Qwen2.5-Coder-1.5B-Instruct, as scripts/setup-local-llm.sh provisions it).
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

export const PROBE_SKILL = `---
name: probe
description: Multiplies two numbers and probes the sandbox it runs in.
---
# Probe

Run \`scripts/multiply.py A B\` to multiply A by B.
`

export function skillsDir () {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'skillbox-node-'))
  const root = path.join(base, 'skills')
  const files = {
    'probe/SKILL.md': PROBE_SKILL,
    'probe/scripts/multiply.py': 'import sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n',
    'probe/scripts/sleep.py': 'import sys, time\ntime.sleep(float(sys.argv[1]))\nprint("slept")\n',
    'probe/scripts/loud.py': 'print("y" * 100000)\n',
    'probe/scripts/probe.py': [
      'import os, socket, sys',
      "print('uid', os.getuid())",
      'try:',
      "    open(sys.argv[1], 'w').write('x'); print('wrote')",
      'except OSError as error:',
      "    print('no write', type(error).__name__)",
      'try:',
      "    socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=2); print('network')",
      'except OSError as error:',
      "    print('no network', type(error).__name__)",
      ''
    ].join('\n'),
    'outside.py': 'print("outside the skill")\n'
  }
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(root, relative)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
  }
  for (const folder of [base, root, path.join(root, 'probe'), path.join(root, 'probe', 'scripts')]) {
    fs.chmodSync(folder, 0o755)
  }
  return { base, root }
}

/** A Chat Completions server playing one agent run, deciding each step by the tool results. */
export async function scriptedModel () {
  const requests = []
  const toolResults = (request) => request.messages.filter((m) => m.role === 'tool').map((m) =>
    typeof m.content === 'string' ? m.content : JSON.stringify(m.content))
  const envelope = (message, finish) => ({
    id: `chatcmpl-${requests.length}`,
    object: 'chat.completion',
    created: 0,
    model: 'scripted',
    choices: [{ index: 0, finish_reason: finish, message }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
  })
  const call = (name, args) => envelope({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${requests.length}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }]
  }, 'tool_calls')
  const reply = (request) => {
    const results = toolResults(request)
    if (results.length === 0) return call('load_skill', { skill: 'probe' })
    if (results.length === 1) return call('use_skill', { skill: 'probe', script: 'scripts/multiply.py', args: ['6', '7'] })
    let ran = {}
    try { ran = JSON.parse(results.at(-1)) } catch {}
    return envelope({ role: 'assistant', content: `The product is ${String(ran.stdout ?? '?').trim()}.` }, 'stop')
  }
  const server = http.createServer((incoming, outgoing) => {
    let body = ''
    incoming.on('data', (chunk) => { body += chunk })
    incoming.on('end', () => {
      const request = JSON.parse(body)
      requests.push(request)
      const text = JSON.stringify(reply(request))
      outgoing.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      outgoing.end(text)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseURL: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    toolResults,
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

/** Write `files` (relative path -> text) under a fresh folder, readable by the sandbox users. */
export function writeSkills (files) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'skillbox-node-'))
  const root = path.join(base, 'skills')
  writeFiles(root, files)
  fs.chmodSync(base, 0o755)
  return root
}

/**
 * Write `files` (relative path -> text) under `root`, and make `root` and everything in it
 * readable by all: the sandbox runs scripts as another uid. (The benchmarks use it too.)
 */
export function writeFiles (root, files) {
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(root, relative)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
  }
  const open = (folder) => {
    fs.chmodSync(folder, 0o755)
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const child = path.join(folder, entry.name)
      if (entry.isDirectory()) open(child)
      else fs.chmodSync(child, 0o644)
    }
  }
  open(root)
}

// The local model, as the Rust tests run it (crates/skillbox-testkit/src/local_model.rs).
const LOCAL_MODEL_STARTUP_MS = 180_000
const LOCAL_MODEL_SERVER_ARGUMENTS = ['--jinja', '-c', '8192', '-t', '2', '-np', '1']
// Starts the program in the background and kills it once our end of the pipe on its stdin
// closes, so the server goes with this process however it ends.
const GUARDED = 'program="$1"; shift; "$program" "$@" >"$LOG" 2>&1 & pid=$!; cat >/dev/null; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null'

/** LLAMA_SERVER and MODEL from `scripts/setup-local-llm.sh 1.5b` (which installs them on first
 * use, a no-op afterwards); null when it fails or SKILLBOX_SKIP_LOCAL_MODEL is set. */
function provisionLocalModel () {
  if ('SKILLBOX_SKIP_LOCAL_MODEL' in process.env) return null
  const done = spawnSync('bash', [path.join(REPOSITORY, 'scripts', 'setup-local-llm.sh'), '1.5b'], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']
  })
  if (done.error || done.status !== 0) return null
  const paths = Object.fromEntries(done.stdout.split('\n').filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
  return paths.LLAMA_SERVER && paths.MODEL ? paths : null
}

async function freePort () {
  const probe = net.createServer()
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address()
  await new Promise((resolve) => probe.close(resolve))
  return port
}

async function answersHealth (port) {
  try {
    const answer = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) })
    return answer.status === 200
  } catch {
    return false
  }
}

/**
 * The local model for test `t`: `{ baseURL, close }`. When it cannot be provisioned the test
 * is skipped with a note and this answers null, unless SKILLBOX_REQUIRE_LOCAL_MODEL is set
 * (CI): then it throws.
 */
export async function localModel (t) {
  const paths = provisionLocalModel()
  if (paths === null) {
    if ('SKILLBOX_REQUIRE_LOCAL_MODEL' in process.env) {
      throw new Error('SKILLBOX_REQUIRE_LOCAL_MODEL is set but the local model could not be set up: run scripts/setup-local-llm.sh to see why')
    }
    t.skip('the local model is missing (scripts/setup-local-llm.sh failed or SKILLBOX_SKIP_LOCAL_MODEL is set)')
    return null
  }
  const port = await freePort()
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skillbox-llama-')), 'llama-server.log')
  const server = spawn('bash', ['-c', GUARDED, 'guarded', paths.LLAMA_SERVER, '-m', paths.MODEL,
    ...LOCAL_MODEL_SERVER_ARGUMENTS, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['pipe', 'ignore', 'inherit'], env: { ...process.env, LOG: log }
  })
  const exited = new Promise((resolve) => server.once('exit', resolve))
  let ended = false
  exited.then(() => { ended = true })
  const close = async () => {
    server.stdin.end()
    await exited
  }
  const deadline = Date.now() + LOCAL_MODEL_STARTUP_MS
  while (!(await answersHealth(port))) {
    if (ended || Date.now() > deadline) {
      await close()
      const said = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '(none)'
      throw new Error(`llama-server did not answer /health within ${LOCAL_MODEL_STARTUP_MS / 1000} s; its log: ${said}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return { baseURL: `http://127.0.0.1:${port}/v1`, close }
}
