#!/usr/bin/env node
// What a JavaScript agent pays for skillbox, side by side in one run (issue 36): the Node side
// of bench/bindings_python.py.
//
//   node bench/bindings_node.mjs [--runs 30] [--package DIR]
//
// DIR is a built copy of bindings/node (the addon at its root, `bin/skillbox` and
// `bin/skillbox-sandbox` beside it: `bash bindings/node/build.sh release`); the default is
// bindings/node of this checkout. Measured, each the median of --runs calls after warm-up:
//
//   * a sandboxed `use_skill` of a no-op Python script through `handleToolCall`, against an
//     unsandboxed `execFile` of the same script with the same interpreter (what seed 002's
//     library does), the two alternating call by call so both see the same machine; the same
//     for a no-op `.mjs` script run by node; and the CPU time per call of each (this process's
//     and its children's), which a loaded machine inflates less;
//   * a warm `tools.json` handler call, a Python and a JavaScript handler (the first call
//     starts the worker);
//   * opening a provider over 1,000 generated skills (bench/generate_skills.py) with its
//     system prompt and tools ready;
//   * loading the package, as a fresh node's start-up with and without `require` / `import`.
//
// Every child process runs with PATH alone in its environment, as skillbox's scripts do.
//
// Prints a markdown table and then one line of JSON.

import { execFile as execFileCallback } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

import { writeFiles } from '../bindings/node/test/support.mjs'

const execFileWithEnvironment = promisify(execFileCallback)
// Every child here gets the environment skillbox gives the scripts it runs, PATH alone: a
// variable of this shell such as NODE_EXTRA_CA_CERTS (node reads that bundle at start-up, tens
// of milliseconds) would otherwise slow the unsandboxed side only.
const CHILD_ENVIRONMENT = { PATH: '/usr/local/bin:/usr/bin:/bin' }
const execFile = (file, args) => execFileWithEnvironment(file, args, { env: CHILD_ENVIRONMENT })
const HERE = path.dirname(fileURLToPath(import.meta.url))

function option (name, fallback) {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : process.argv[at + 1]
}

const runs = Number(option('--runs', '30'))
const packageDir = path.resolve(option('--package', path.join(HERE, '..', 'bindings', 'node')))
const { createSkillsProvider } = await import(pathToFileURL(path.join(packageDir, 'index.mjs')).href)

function median (samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

async function elapsedMs (call) {
  const started = process.hrtime.bigint()
  await call()
  return Number(process.hrtime.bigint() - started) / 1e6
}

// Children's CPU comes from /proc/self/stat (cutime, cstime), in clock ticks.
const CLOCK_TICKS_PER_SECOND = 100

/** CPU milliseconds of this process (all its threads) and of its children waited for. */
function cpuMs () {
  const own = process.cpuUsage()
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
  // After the command name: state is field 3, cutime and cstime fields 16 and 17.
  const children = Number(fields[13]) + Number(fields[14])
  return (own.user + own.system) / 1000 + children * 1000 / CLOCK_TICKS_PER_SECOND
}

/**
 * Medians (ms) of each call, after `warmup` rounds, the calls alternating round by round.
 * With `cpu`, also the mean CPU milliseconds per call (this process and its children) into it.
 */
async function interleaved (calls, count, warmup = 2, cpu = undefined) {
  const samples = Object.fromEntries(Object.keys(calls).map((name) => [name, []]))
  const cpuUsed = Object.fromEntries(Object.keys(calls).map((name) => [name, 0]))
  for (let round = 0; round < warmup + count; round++) {
    const names = Object.keys(calls)
    if (round % 2) names.reverse()
    for (const name of names) {
      const cpuBefore = cpuMs()
      const ms = await elapsedMs(calls[name])
      if (round >= warmup) {
        samples[name].push(ms)
        cpuUsed[name] += cpuMs() - cpuBefore
      }
    }
  }
  if (cpu) Object.assign(cpu, Object.fromEntries(Object.entries(cpuUsed).map(([name, used]) => [name, used / count])))
  return Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, median(list)]))
}

function check (answer, what) {
  if (!answer || answer.success === false || answer.error) {
    throw new Error(`${what} failed: ${JSON.stringify(answer)}`)
  }
  return answer
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'skillbox-bench-node-'))
fs.chmodSync(work, 0o755)
const root = path.join(work, 'skills')
writeFiles(root, {
  'noop/SKILL.md': '---\nname: noop\ndescription: Does nothing.\n---\nRun scripts/noop.py.\n',
  'noop/scripts/noop.py': 'pass\n',
  'noop/scripts/noop.mjs': '// nothing\n',
  'noop/scripts/handler.py': "def handler(arguments):\n    return {'ok': True}\n",
  'noop/scripts/handler.mjs': 'export default async function (args) {\n  return { ok: true }\n}\n',
  'noop/tools.json': JSON.stringify([
    { name: 'noop_tool', description: 'Does nothing.', script: 'scripts/handler.py', parameters: {} },
    { name: 'noop_js_tool', description: 'Does nothing.', script: 'scripts/handler.mjs', parameters: {} }
  ])
})

// The interpreters skillbox runs scripts with (found on this process's PATH, as the provider
// below finds them): the peer runs the same binaries.
const doctor = JSON.parse((await execFileWithEnvironment(path.join(packageDir, 'bin', 'skillbox'),
  ['--root', root, 'doctor', '--json'])).stdout)
const chosen = (language) => doctor.interpreters.find((entry) => entry.language === language && entry.chosen).program
const python = chosen('python')
const node = chosen('node')

const skills = await createSkillsProvider(root)
const results = { node: process.version, python, nodeForScripts: node, sandbox: doctor.level }
const script = (name) => path.join(root, 'noop', 'scripts', name)
const first = check(await skills.handleToolCall('use_skill', { skill: 'noop', script: 'scripts/noop.py' }), 'use_skill')
results.sandboxOfRun = first.sandbox

const useSkill = (file) => async () => check(await skills.handleToolCall('use_skill', { skill: 'noop', script: `scripts/${file}` }), 'use_skill')
const pythonCpu = {}
const pythonRows = await interleaved({
  skillbox: useSkill('noop.py'),
  execFile: () => execFile(python, [script('noop.py')])
}, runs, 2, pythonCpu)
const nodeCpu = {}
const nodeRows = await interleaved({
  skillbox: useSkill('noop.mjs'),
  execFile: () => execFile(node, [script('noop.mjs')])
}, runs, 2, nodeCpu)

const handler = (name) => async () => {
  const answer = await skills.handleToolCall(name, {})
  if (!answer || answer.ok !== true) throw new Error(`${name} answered ${JSON.stringify(answer)}`)
}
const handlers = await interleaved({ python: handler('noop_tool'), javascript: handler('noop_js_tool') }, Math.max(runs, 100), 3)

const many = path.join(work, 'many')
await execFile('python3', [path.join(HERE, 'generate_skills.py'), many, '--count', '1000'])
let manyNames = 0
let manyTools = 0
const provider = await interleaved({
  open: async () => {
    const opened = await createSkillsProvider(many)
    const prompt = opened.systemPrompt
    const tools = opened.tools
    if (!prompt || !tools.length) throw new Error('a provider over 1,000 skills has no prompt or tools')
    manyNames = opened.skillNames.length
    manyTools = tools.length
  }
}, Math.max(5, Math.floor(runs / 3)), 1)

const entry = path.join(packageDir, 'index.js')
const moduleUrl = pathToFileURL(path.join(packageDir, 'index.mjs')).href
const startUps = await interleaved({
  bare: () => execFile(process.execPath, ['-e', '0']),
  bareModule: () => execFile(process.execPath, ['--input-type=module', '-e', '0']),
  require: () => execFile(process.execPath, ['-e', `require(${JSON.stringify(entry)})`]),
  import: () => execFile(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(moduleUrl)})`])
}, 10, 1)

const rows = [
  ['`use_skill` of a no-op Python script, `handleToolCall`, sandboxed', pythonRows.skillbox],
  ['its CPU per call (this process and its children)', pythonCpu.skillbox],
  [`the same script, \`execFile(${python})\`, no sandbox`, pythonRows.execFile],
  ['its CPU per call', pythonCpu.execFile],
  ['ratio (CPU)', pythonRows.skillbox / pythonRows.execFile, 'x', pythonCpu.skillbox / pythonCpu.execFile],
  ['`use_skill` of a no-op `.mjs` script, `handleToolCall`, sandboxed', nodeRows.skillbox],
  ['its CPU per call', nodeCpu.skillbox],
  [`the same script, \`execFile(${node})\`, no sandbox`, nodeRows.execFile],
  ['its CPU per call', nodeCpu.execFile],
  ['ratio (CPU)', nodeRows.skillbox / nodeRows.execFile, 'x', nodeCpu.skillbox / nodeCpu.execFile],
  ['a warm `tools.json` handler call, Python handler', handlers.python],
  ['a warm `tools.json` handler call, JavaScript handler', handlers.javascript],
  [`a provider over 1,000 generated skills (${manyNames} skills, ${manyTools} tools), prompt and tools ready`, provider.open],
  ['`node -e 0`', startUps.bare],
  ['`node -e "require(skillbox)"`', startUps.require],
  ['`node --input-type=module -e 0`', startUps.bareModule],
  ['`node --input-type=module -e "await import(skillbox)"`', startUps.import]
]
console.log(`node ${process.version}, sandbox ${doctor.level} (this run: ${first.sandbox}), median of ${runs} calls\n`)
console.log('| measure | median |\n| --- | ---: |')
for (const [what, value, unit, cpuRatio] of rows) {
  console.log(`| ${what} | ${unit === 'x' ? `${value.toFixed(2)}x (${cpuRatio.toFixed(2)}x)` : `${value.toFixed(value < 1 ? 3 : 2)} ms`} |`)
}
Object.assign(results, {
  useSkillPython: pythonRows.skillbox,
  useSkillPythonCpu: pythonCpu.skillbox,
  execFilePythonCpu: pythonCpu.execFile,
  useSkillNodeCpu: nodeCpu.skillbox,
  execFileNodeCpu: nodeCpu.execFile,
  execFilePython: pythonRows.execFile,
  useSkillNode: nodeRows.skillbox,
  execFileNode: nodeRows.execFile,
  warmHandlerPython: handlers.python,
  warmHandlerJavaScript: handlers.javascript,
  provider1000: provider.open,
  provider1000Skills: manyNames,
  provider1000Tools: manyTools,
  nodeBare: startUps.bare,
  nodeBareModule: startUps.bareModule,
  nodeRequire: startUps.require,
  nodeImport: startUps.import
})
console.log(JSON.stringify(results, (key, value) => typeof value === 'number' ? Math.round(value * 1000) / 1000 : value))
fs.rmSync(work, { recursive: true, force: true })
