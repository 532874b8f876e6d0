'use strict'
// skillbox for JavaScript agents: seed 002's createSkillsProvider over the skillbox runtime.
// Every call goes through the addon (skillbox.linux-x64-gnu.node, crate bindings/node) to the
// facade's door policy; this file only adapts names, callbacks and frameworks.

const path = require('node:path')
const fs = require('node:fs')

const native = require('./skillbox.linux-x64-gnu.node')

const SANDBOX_HELPER = path.join(__dirname, 'bin', 'skillbox-sandbox')

/** The formats toolsFor renders. */
const TOOL_FORMATS = Object.freeze(['responses', 'openai', 'anthropic', 'gemini', 'mcp'])

/**
 * Open skillsDir (a folder of skills, or an array of them, lowest precedence first).
 * Options: seed 002's include, exclude, timeout (ms), maxOutput (bytes), cwd; and sandbox,
 * sandboxHelper, allowNetwork, allowNetworkFor, secrets ({NAME: 'value'} or
 * {NAME: {value, skills}}), passEnv, onApproval (async (request) => true | false | reason),
 * trust, findSkills, maxPromptChars, auditLog, runtimeDir, maxRuns.
 */
async function createSkillsProvider (skillsDir, options = {}) {
  const roots = Array.isArray(skillsDir) ? skillsDir.map(String) : [String(skillsDir)]
  const { onApproval, secrets, sandboxHelper, ...rest } = options
  const known = new Set(['include', 'exclude', 'timeout', 'maxOutput', 'cwd', 'sandbox', 'allowNetwork',
    'allowNetworkFor', 'passEnv', 'trust', 'findSkills', 'maxPromptChars', 'auditLog', 'runtimeDir', 'maxRuns'])
  for (const key of Object.keys(rest)) {
    if (!known.has(key)) throw new TypeError(`createSkillsProvider: unknown option \`${key}\``)
  }
  if (onApproval !== undefined && typeof onApproval !== 'function') {
    throw new TypeError('createSkillsProvider: `onApproval` must be a function (request) => boolean | string')
  }
  const helper = sandboxHelper ?? (fs.existsSync(SANDBOX_HELPER) ? SANDBOX_HELPER : undefined)
  const inner = await native.openProvider(roots, {
    ...rest,
    sandboxHelper: helper,
    secrets: secrets && Object.fromEntries(Object.entries(secrets).map(([name, grant]) =>
      [name, typeof grant === 'string' ? { value: grant } : grant])),
    onApproval: onApproval && approvalWrapper(onApproval)
  })
  return new SkillsProvider(inner)
}

/** The user's callback as the addon calls it: JSON text in, a decision as JSON text out. */
function approvalWrapper (onApproval) {
  return async (requestJson) => {
    try {
      const answer = await onApproval(JSON.parse(requestJson))
      if (answer === true) return JSON.stringify({ allow: true })
      return JSON.stringify({ allow: false, reason: typeof answer === 'string' ? answer : '' })
    } catch (error) {
      return JSON.stringify({ allow: false, reason: `onApproval threw ${error && error.message ? error.message : error}` })
    }
  }
}

class SkillsProvider {
  #native

  constructor (nativeProvider) {
    this.#native = nativeProvider
  }

  /** The system-prompt section listing the skills. */
  get systemPrompt () { return this.#native.systemPrompt }

  /** The tool definitions in the Responses API's format (seed 002's). */
  get tools () { return this.#native.toolsFor('responses') }

  /** The tool definitions in the Chat Completions format. */
  get chatCompletionsTools () { return this.#native.toolsFor('openai') }

  /** The names of the skills a model may see, sorted. */
  get skillNames () { return this.#native.skillNames }

  /** What was found wrong while opening. */
  get warnings () { return this.#native.warnings }

  /** The tool definitions in one of TOOL_FORMATS. */
  toolsFor (format) { return this.#native.toolsFor(format) }

  /**
   * Answer a model's tool call: load_skill the instructions (a string), use_skill
   * {success, stdout, stderr, exitCode, error, errorType}, every other tool what it answers.
   * `args` is an object, or the model's argument text as it came. Failures are answers
   * too, for the model to read; it rejects only for arguments that are not JSON values.
   */
  async handleToolCall (name, args = {}) { return this.#native.handleToolCall(name, args) }

  /**
   * The tools as the OpenRouter SDK's `tool()` instances (seed 002's sdkTools), for
   * `callModel({ tools: [...skills.sdkTools] })`: each with a zod schema made from skillbox's
   * JSON schema. Needs @openrouter/agent (or @openrouter/sdk) and zod.
   */
  get sdkTools () {
    const { tool, z } = requireOpenRouter()
    return this.chatCompletionsTools.map((definition) => {
      const { name, description, parameters } = definition.function
      return tool({
        name,
        description,
        inputSchema: z.fromJSONSchema(parameters),
        execute: (params) => this.handleToolCall(name, params ?? {})
      })
    })
  }

  /**
   * The tools as a Vercel AI SDK ToolSet for generateText/streamText, with skillbox's JSON
   * schemas (`jsonSchema`, no zod needed). `ai` is required when this is called (ESM-only
   * since v7: Node 20.19 and later require ES modules), or pass the module you imported.
   */
  aiSdkTools (ai = requireAiSdk()) {
    const tools = {}
    for (const definition of this.chatCompletionsTools) {
      const { name, description, parameters } = definition.function
      tools[name] = ai.tool({
        description,
        inputSchema: ai.jsonSchema(parameters),
        execute: (input) => this.handleToolCall(name, input ?? {})
      })
    }
    return tools
  }
}

/** The OpenRouter SDK's `tool` and zod, for sdkTools. */
function requireOpenRouter () {
  let tool
  const problems = []
  for (const [name, pick] of [['@openrouter/agent', (m) => m.tool], ['@openrouter/sdk/lib/tool.js', (m) => m.tool]]) {
    try {
      tool = pick(require(name))
      if (typeof tool === 'function') break
    } catch (error) {
      problems.push(`${name}: ${error.code || error.message}`)
    }
  }
  let z
  try {
    z = require('zod').z
  } catch (error) {
    problems.push(`zod: ${error.code || error.message}`)
  }
  if (typeof tool !== 'function' || !z || typeof z.fromJSONSchema !== 'function') {
    throw new Error(`skills.sdkTools needs @openrouter/agent (or @openrouter/sdk) and zod 4: npm install @openrouter/agent zod (${problems.join('; ')})`)
  }
  return { tool, z }
}

function requireAiSdk () {
  try {
    return require('ai')
  } catch (error) {
    throw new Error(`aiSdkTools() needs the Vercel AI SDK: npm install ai (${error.message})`)
  }
}

module.exports = { createSkillsProvider, SkillsProvider, TOOL_FORMATS, SANDBOX_HELPER }
