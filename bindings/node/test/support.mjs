// What the Node binding's tests share: a skill folder written per test, readable by the
// sandbox users, and a scripted OpenAI-compatible model server on 127.0.0.1 (a free port)
// that loads a skill, runs its script and answers with what it printed.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'

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
