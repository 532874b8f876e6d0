// The package's seed 002 surface: prompt, tools in every format, names, the answers and their
// error kinds, approval, concurrency, and both module systems.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { createSkillsProvider, TOOL_FORMATS } from '../index.mjs'
import { skillsDir } from './support.mjs'

test('prompt, tools in every format and skill names', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  assert.deepEqual(skills.skillNames, ['probe'])
  assert.match(skills.systemPrompt, /### probe/)
  const names = skills.tools.map((tool) => tool.name)
  assert.deepEqual(names.slice(0, 2), ['load_skill', 'use_skill'])
  assert.deepEqual(skills.chatCompletionsTools.map((tool) => tool.function.name), names)
  assert.deepEqual(skills.toolsFor('anthropic').map((tool) => tool.name), names)
  assert.deepEqual(skills.toolsFor('gemini')[0].functionDeclarations.map((tool) => tool.name), names)
  assert.deepEqual(TOOL_FORMATS, ['responses', 'openai', 'anthropic', 'gemini', 'mcp'])
  assert.throws(() => skills.toolsFor('xml'), /unknown tool format "xml"/)
})

test('load_skill answers the instructions and use_skill the seed\'s result', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root, { include: ['probe'] })
  const instructions = await skills.handleToolCall('load_skill', { skill: 'probe' })
  assert.equal(typeof instructions, 'string')
  assert.match(instructions, /Run `scripts\/multiply.py A B`/)
  const result = await skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/multiply.py', args: ['6', '7'] })
  assert.deepEqual([result.success, result.stdout, result.stderr, result.exitCode], [true, '42\n', '', 0])
  assert.equal(result.sandbox, 'full')
})

test('failures come back as the seed\'s kinds', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  const kind = async (args) => {
    const answer = await skills.handleToolCall('use_skill', args)
    // Every failure is the seed's whole result, whether anything ran or not.
    assert.ok(answer.error, JSON.stringify(answer))
    assert.equal(answer.success, false, JSON.stringify(answer))
    assert.equal(typeof answer.stdout, 'string', JSON.stringify(answer))
    assert.equal(typeof answer.stderr, 'string', JSON.stringify(answer))
    assert.ok('exitCode' in answer, JSON.stringify(answer))
    return answer.errorType
  }
  assert.deepEqual([
    await kind({ skill: 'nope', script: 'x.py' }),
    await kind({ skill: 'probe', script: 'scripts/none.py' }),
    await kind({ skill: 'probe', script: '../outside.py' }),
    await kind({ skill: 'probe', script: 'scripts/multiply.py', args: { a: 1 } })
  ], ['SkillNotFound', 'ScriptNotFound', 'ScriptNotAllowed', 'InvalidArgs'])
})

test('arguments may be the model\'s text', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  const ran = await skills.handleToolCall('use_skill', '{"skill": "probe", "script": "scripts/multiply.py", "args": ["2", "21"]}')
  assert.equal(ran.stdout, '42\n')
  const broken = await skills.handleToolCall('use_skill', '{"skill": ')
  assert.equal(broken.errorType, 'InvalidArgs')
  assert.match(broken.error, /not valid JSON/)
})

test('bad options are named', async () => {
  const { root, base } = skillsDir()
  await assert.rejects(createSkillsProvider(`${base}/missing`), /missing/)
  await assert.rejects(createSkillsProvider(root, { sandbox: 'strong' }), /`sandbox` must be/)
  await assert.rejects(createSkillsProvider(root, { colour: 'blue' }), /unknown option `colour`/)
  await assert.rejects(createSkillsProvider(root, { cwd: root }), /overlaps the skill root/)
})

test('onApproval is asked, and a refusal is ScriptNotAllowed', async () => {
  const { root } = skillsDir()
  const asked = []
  const skills = await createSkillsProvider(root, {
    onApproval: async (request) => {
      asked.push(request)
      return request.arguments.args[0] === '2' ? true : 'only doubles today'
    }
  })
  const allowed = await skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/multiply.py', args: ['2', '3'] })
  assert.equal(allowed.stdout, '6\n')
  const refused = await skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/multiply.py', args: ['4', '5'] })
  assert.equal(refused.errorType, 'ScriptNotAllowed')
  assert.match(refused.error, /only doubles today/)
  assert.deepEqual(asked.map((request) => [request.tool, request.skill]), [['use_skill', 'probe'], ['use_skill', 'probe']])
  const throwing = await createSkillsProvider(root, { onApproval: () => { throw new Error('the reviewer is out') } })
  const thrown = await throwing.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/multiply.py', args: ['1', '1'] })
  assert.equal(thrown.errorType, 'ScriptNotAllowed')
  assert.match(thrown.error, /the reviewer is out/)
})

test('concurrent calls run concurrently', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root, { maxRuns: 3 })
  const sleep = { skill: 'probe', script: 'scripts/sleep.py', args: ['1.5'] }
  await skills.handleToolCall('use_skill', sleep)
  const started = performance.now()
  const answers = await Promise.all([0, 1, 2].map(() => skills.handleToolCall('use_skill', sleep)))
  const elapsed = performance.now() - started
  assert.ok(answers.every((answer) => answer.success), JSON.stringify(answers))
  assert.ok(elapsed < 4000, `three 1.5 s runs took ${elapsed} ms`)
})

test('CommonJS gives the same package', async () => {
  const require = createRequire(import.meta.url)
  const cjs = require('../index.js')
  const { root } = skillsDir()
  const skills = await cjs.createSkillsProvider(root)
  assert.deepEqual(skills.skillNames, ['probe'])
})

test('the package carries the skillbox command', async () => {
  const { spawnSync } = await import('node:child_process')
  const { fileURLToPath } = await import('node:url')
  const packageJson = JSON.parse((await import('node:fs')).readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const command = fileURLToPath(new URL(`../${packageJson.bin.skillbox}`, import.meta.url))
  const { root } = skillsDir()
  const listed = spawnSync(command, ['list', '--json', root], { encoding: 'utf8' })
  assert.equal(listed.status, 0, listed.stderr)
  assert.match(listed.stdout, /"probe"/)
})
