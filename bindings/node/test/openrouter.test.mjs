// seed 002's sdkTools: the OpenRouter SDK's tool() instances (@openrouter/agent and zod from
// npm), each answering through handleToolCall.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createSkillsProvider } from '../index.mjs'
import { skillsDir } from './support.mjs'

test('sdkTools are OpenRouter tools answering through the provider', async () => {
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  const tools = skills.sdkTools
  assert.deepEqual(tools.map((tool) => tool.type), tools.map(() => 'function'))
  assert.deepEqual(tools.map((tool) => tool.function.name), skills.tools.map((tool) => tool.name))
  const useSkill = tools.find((tool) => tool.function.name === 'use_skill').function
  // The zod schema made from skillbox's keeps `args` optional and `script` required.
  assert.equal(useSkill.inputSchema.safeParse({ skill: 'probe', script: 'scripts/multiply.py' }).success, true)
  assert.equal(useSkill.inputSchema.safeParse({ skill: 'probe' }).success, false)
  const result = await useSkill.execute({ skill: 'probe', script: 'scripts/multiply.py', args: ['6', '7'] })
  assert.deepEqual([result.success, result.stdout], [true, '42\n'])
})
