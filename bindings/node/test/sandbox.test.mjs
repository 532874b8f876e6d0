// The sandbox holds from Node as from the command line: the package carries the helper.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { test } from 'node:test'

import { createSkillsProvider, SANDBOX_HELPER } from '../index.mjs'
import { skillsDir } from './support.mjs'

async function listener () {
  const server = net.createServer((socket) => socket.end())
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

async function probe (skills, target, server) {
  const answer = await skills.handleToolCall('use_skill', {
    skill: 'probe', script: 'scripts/probe.py', args: [target, '127.0.0.1', String(server.address().port)]
  })
  assert.equal(answer.success, true, JSON.stringify(answer))
  return answer.stdout
}

test('the package carries the helper', () => {
  assert.ok(fs.statSync(SANDBOX_HELPER).mode & 0o111)
})

test('no network, not root, nothing written outside; a grant opens the network', async (t) => {
  const server = await listener()
  t.after(() => server.close())
  const { root, base } = skillsDir()
  const outside = path.join(base, 'outside')
  fs.mkdirSync(outside, { mode: 0o777 })
  fs.chmodSync(outside, 0o777)
  const target = path.join(outside, 'written.txt')
  const stdout = await probe(await createSkillsProvider(root), target, server)
  assert.doesNotMatch(stdout, /^uid 0$/m)
  assert.match(stdout, /no write/)
  assert.match(stdout, /no network/)
  assert.equal(fs.existsSync(target), false)
  const granted = await probe(await createSkillsProvider(root, { allowNetworkFor: ['probe'] }), target + '.2', server)
  assert.match(granted, /^network$/m)
})

test('the timeout and the output cap apply', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root, { timeout: 1500, maxOutput: 1000 })
  const slow = await skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/sleep.py', args: ['30'] })
  assert.deepEqual([slow.success, slow.errorType], [false, 'ExecutionTimeout'])
  const loud = await skills.handleToolCall('use_skill', { skill: 'probe', script: 'scripts/loud.py' })
  assert.ok(loud.stdout.endsWith('[output truncated]'))
  assert.ok(loud.stdout.length < 1100)
})

test('paths stay in the skill', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  for (const script of ['../outside.py', '/etc/passwd', 'scripts/../../outside.py']) {
    const answer = await skills.handleToolCall('use_skill', { skill: 'probe', script })
    assert.equal(answer.errorType, 'ScriptNotAllowed', script)
  }
})
