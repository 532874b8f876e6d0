// The Vercel AI SDK (ai + @ai-sdk/openai-compatible from npm) drives the provider against a
// scripted model: the model loads a skill, runs its script in the sandbox, answers with it.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, stepCountIs } from 'ai'

import { createSkillsProvider } from '../index.mjs'
import { scriptedModel, skillsDir } from './support.mjs'

test('generateText with aiSdkTools()', async (t) => {
  const model = await scriptedModel()
  t.after(model.close)
  const { root } = skillsDir()
  const skills = await createSkillsProvider(root)
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: model.baseURL, apiKey: 'unused' })
  const result = await generateText({
    model: provider('scripted'),
    system: `You are a helpful assistant.\n\n${skills.systemPrompt}`,
    prompt: 'What is 6 times 7? Use the probe skill.',
    tools: skills.aiSdkTools(),
    stopWhen: stepCountIs(5)
  })
  assert.equal(result.text, 'The product is 42.')
  assert.equal(model.requests.length, 3)
  const [loaded, ran] = model.toolResults(model.requests.at(-1))
  assert.match(loaded, /Run `scripts\/multiply.py A B`/)
  const parsed = JSON.parse(ran)
  assert.deepEqual([parsed.success, parsed.stdout, parsed.exitCode], [true, '42\n', 0])
  assert.deepEqual(model.requests[0].tools.map((tool) => tool.function.name).slice(0, 2), ['load_skill', 'use_skill'])
})
