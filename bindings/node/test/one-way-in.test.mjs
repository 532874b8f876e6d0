// One way in: the binding is a door like the CLI's. A hidden skill, bad arguments and an
// unknown tool get from handleToolCall the answer `skillbox call` (the command this package
// carries) gives, word for word: both go through the same door policy.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import test from 'node:test'
import { fileURLToPath } from 'node:url'

import { createSkillsProvider } from '../index.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const binary = path.join(here, '..', 'bin', 'skillbox')

function writeSkills () {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skillbox-node-owi-'))
  const files = {
    'secret/SKILL.md': '---\nname: secret\ndescription: Only a person may start this.\ndisable-model-invocation: true\n---\nSecret steps.\n',
    'visible/SKILL.md': '---\nname: visible\ndescription: A skill anyone may read.\n---\nRead references/notes.md.\n',
    'visible/references/notes.md': 'Notes.\n'
  }
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(root, relative)
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 })
    fs.writeFileSync(file, text, { mode: 0o644 })
  }
  fs.chmodSync(root, 0o755)
  return root
}

function cliAnswer (root, tool, args) {
  try {
    execFileSync(binary, ['call', tool, root, '--args', JSON.stringify(args)], { encoding: 'utf8' })
  } catch (error) {
    assert.equal(error.status, 1, error.stderr)
    return JSON.parse(error.stdout).error
  }
  assert.fail('`skillbox call` succeeded where it should refuse')
}

test('the binding answers as the CLI does', async () => {
  const root = writeSkills()
  const skills = await createSkillsProvider(root)
  const cases = [
    ['hidden', 'read_skill_file', { skill: 'secret', path: 'SKILL.md' }],
    ['bad', 'read_skill_file', { skill: 'visible', path: 5 }],
    ['unknown', 'no_such_tool', {}]
  ]
  for (const [kase, tool, args] of cases) {
    const answer = await skills.handleToolCall(tool, args)
    assert.deepEqual(Object.keys(answer), ['error'], `${kase}: ${JSON.stringify(answer)}`)
    const cli = cliAnswer(root, tool, args)
    if (kase === 'unknown') {
      const prefix = 'unknown tool `no_such_tool`; the tools are: load_skill, use_skill, read_skill_file'
      assert.ok(answer.error.startsWith(prefix), answer.error)
      assert.ok(cli.startsWith(prefix), cli)
    } else {
      assert.equal(answer.error, cli, kase)
    }
  }
})
