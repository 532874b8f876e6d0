// The package against hostile callers: a model writing tool-call arguments, a skill's scripts,
// and an embedding application that gets its options or callbacks wrong. Tests marked `todo`
// are holes found by an attack review: each states what should happen and fails today; node
// reports them without failing the run. Drop the `todo` once the hole is fixed.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

import { createSkillsProvider, SANDBOX_HELPER } from '../index.mjs'
import { PROBE_SKILL, skillsDir } from './support.mjs'

const MULTIPLY = { skill: 'probe', script: 'scripts/multiply.py', args: ['6', '7'] }

test('numeric options that are negative, fractional, not finite or past 32 bits are refused, naming the option', async () => {
  const { root } = skillsDir()
  const cases = [
    ['timeout', -1], ['timeout', Number.NaN], ['timeout', Infinity], ['timeout', 2 ** 32 + 100], ['timeout', 1.5],
    ['maxOutput', -1], ['maxRuns', -1], ['maxPromptChars', -5]
  ]
  for (const [name, value] of cases) {
    await assert.rejects(createSkillsProvider(root, { [name]: value }), new RegExp(name), `${name}: ${value}`)
  }
})

test('a sandbox helper others can replace is refused', async () => {
  const { root, base } = skillsDir()
  const helper = path.join(base, 'skillbox-sandbox')
  fs.copyFileSync(SANDBOX_HELPER, helper)
  fs.chmodSync(helper, 0o777)
  await assert.rejects(
    createSkillsProvider(root, { sandboxHelper: helper, runtimeDir: path.join(base, 'runtime') }),
    /skillbox-sandbox/
  )
})

test('a project\'s default skill folder named by path keeps the trust gate', {
  todo: 'hole: every root a binding opens is explicit, so a clone\'s .agents/skills runs its scripts, ' +
    'where `skillbox call` in that clone answers Untrusted'
}, async (t) => {
  const { base } = skillsDir()
  const home = path.join(base, 'home')
  fs.mkdirSync(home)
  const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, XDG_DATA_HOME: process.env.XDG_DATA_HOME }
  t.after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  Object.assign(process.env, { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share') })
  const skill = path.join(base, 'clone', '.agents', 'skills', 'probe')
  fs.mkdirSync(path.join(skill, 'scripts'), { recursive: true })
  fs.writeFileSync(path.join(skill, 'SKILL.md'), PROBE_SKILL)
  fs.writeFileSync(path.join(skill, 'scripts', 'multiply.py'), 'import sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n')
  for (const folder of ['clone', 'clone/.agents', 'clone/.agents/skills', 'clone/.agents/skills/probe', 'clone/.agents/skills/probe/scripts']) {
    fs.chmodSync(path.join(base, folder), 0o755)
  }
  const skills = await createSkillsProvider(path.join(base, 'clone', '.agents', 'skills'))
  const answer = await skills.handleToolCall('use_skill', MULTIPLY)
  assert.equal(answer.errorType, 'Untrusted', JSON.stringify(answer))
})

test('a cwd that is a file is refused when opening', async () => {
  const { root, base } = skillsDir()
  const file = path.join(base, 'notes.txt')
  fs.writeFileSync(file, 'x')
  await assert.rejects(createSkillsProvider(root, { cwd: file }), /working folder/)
})

// What held in the review, kept so it keeps holding.

test('a script sees neither this process\'s environment nor its open files', async (t) => {
  const { root, base } = skillsDir()
  fs.writeFileSync(path.join(root, 'probe', 'scripts', 'look.py'), [
    'import os',
    'print(sorted(os.environ))',
    "for descriptor in sorted(int(name) for name in os.listdir('/proc/self/fd')):",
    '    try:',
    '        print(descriptor, os.read(descriptor, 64))',
    '    except OSError:',
    '        pass',
    ''
  ].join('\n'))
  const secret = path.join(base, 'secret.txt')
  fs.writeFileSync(secret, 'embedder-file-secret')
  const descriptor = fs.openSync(secret, 'r')
  process.env.EMBEDDER_API_KEY = 'sk-embedder-secret'
  t.after(() => {
    fs.closeSync(descriptor)
    delete process.env.EMBEDDER_API_KEY
  })
  const skills = await createSkillsProvider(root)
  const answer = await skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/look.py' })
  assert.equal(answer.success, true, JSON.stringify(answer))
  assert.doesNotMatch(answer.stdout, /EMBEDDER_API_KEY|embedder-file-secret/)
})

test('arguments nested past any reason, or holding themselves, are refused without ending the process', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  const depth = 100000
  const deep = JSON.parse(`{"skill": "probe", "script": "scripts/multiply.py", "args": ${'['.repeat(depth)}${']'.repeat(depth)}}`)
  await assert.rejects(async () => skills.handleToolCall('use_skill', deep), /nesting depth/)
  const cyclic = { skill: 'probe', script: 'scripts/multiply.py' }
  cyclic.args = cyclic
  await assert.rejects(async () => skills.handleToolCall('use_skill', cyclic), /nesting depth/)
})

test('arguments that are not JSON values reject the promise handleToolCall returns', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  let returned
  assert.doesNotThrow(() => { returned = skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/multiply.py', args: [() => 1] }) })
  await assert.rejects(returned, /cannot be represented/)
})

test('an onApproval answer other than true refuses', async () => {
  const { root } = skillsDir()
  for (const answer of [{ allow: false }, 1, ['deny'], 'yes']) {
    const skills = await createSkillsProvider(root, { onApproval: () => answer })
    const ran = await skills.handleToolCall('use_skill', MULTIPLY)
    assert.equal(ran.errorType, 'ScriptNotAllowed', JSON.stringify([answer, ran]))
  }
})
