// A real model drives the provider: the Vercel AI SDK (ai + @ai-sdk/openai-compatible) with
// Qwen2.5-Coder-1.5B-Instruct on llama-server loads a skill and runs its script in the
// sandbox. The model's wording is not checked, only the structure: which tools ran, that the
// script's output reached the model, and that the run ended with an answer within its steps.
// Skipped with a note when the model cannot be provisioned, unless SKILLBOX_REQUIRE_LOCAL_MODEL
// is set (CI).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'

import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, stepCountIs } from 'ai'

import { createSkillsProvider } from '../index.mjs'
import { localModel, writeSkills } from './support.mjs'

const GREETING_SKILL = `---
name: greeting
description: Writes a personal greeting for someone. Use when asked to greet a person.
---
Run the script greet.py with use_skill, passing the person's name as the only argument: {"skill": "greeting", "script": "greet.py", "args": ["NAME"]}. Then answer with the greeting it printed.
`

// Bounds: model requests (steps), tokens per answer, and the run's time.
const STEPS = 6
const MAX_TOKENS = 256
const RUN_MS = 900_000

test('a local model loads a skill and runs its script through aiSdkTools()', { timeout: RUN_MS + 240_000 }, async (t) => {
  const model = await localModel(t)
  if (model === null) return
  t.after(model.close)
  // A marker no model can guess: it reaches the model only if the script ran.
  const marker = randomUUID().replaceAll('-', '').slice(0, 12)
  const root = writeSkills({
    'greeting/SKILL.md': GREETING_SKILL,
    'greeting/scripts/greet.py': `import sys\nprint('Greetings, ' + ' '.join(sys.argv[1:]) + '! (ticket ${marker})')\n`
  })
  const skills = await createSkillsProvider(root)
  const provider = createOpenAICompatible({ name: 'local', baseURL: model.baseURL, apiKey: 'unused' })
  const result = await generateText({
    model: provider('local'),
    system: `You are a helpful assistant.\n\n${skills.systemPrompt}`,
    // Told only to use a skill, a 1.5B model calls the skill's name as a tool, or loads it and
    // then writes a greeting itself; told which script to run with which arguments, it runs it.
    prompt: 'Load the greeting skill with load_skill. Then run its script greet.py with use_skill, with the args ["Ada Lovelace"], and answer with what it printed.',
    tools: skills.aiSdkTools(),
    stopWhen: stepCountIs(STEPS),
    temperature: 0,
    maxOutputTokens: MAX_TOKENS,
    abortSignal: AbortSignal.timeout(RUN_MS)
  })
  const calls = result.steps.flatMap((step) => step.toolCalls.map((call) => call.toolName))
  const results = result.steps.flatMap((step) => step.toolResults)
  const trace = JSON.stringify(result.steps.map((step) => step.content))
  assert.ok(calls.includes('load_skill') && calls.includes('use_skill'), trace)
  assert.ok(calls.indexOf('load_skill') < calls.indexOf('use_skill'), trace)
  assert.ok(results.some((r) => r.toolName === 'load_skill' && String(r.output).includes('greet.py')), trace)
  assert.ok(results.some((r) => r.toolName === 'use_skill' && r.output.success === true && r.output.exitCode === 0 &&
    r.output.stdout.includes(`(ticket ${marker})`)), trace)
  assert.equal(result.finishReason, 'stop', trace)
  assert.ok(result.text.trim().length > 0, trace)
})
