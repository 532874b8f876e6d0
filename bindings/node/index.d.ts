// Types of the package `skillbox` (index.js over the addon in src/).

/** seed 002's SkillExecutionResult, with skillbox's own fields. */
export interface SkillExecutionResult {
  success: boolean
  stdout: string
  stderr: string
  exitCode?: number
  error?: string
  /** SkillNotFound, ScriptNotFound, ScriptNotAllowed, InvalidArgs, ExecutionTimeout, ExecutionFailed, ... */
  errorType?: string
  durationMs?: number
  sandbox?: string
}

/** What onApproval is asked about. */
export interface ApprovalRequest {
  tool: string
  skill: string | null
  arguments: Record<string, unknown>
  summary: string
}

export interface SkillsProviderOptions {
  include?: string[]
  exclude?: string[]
  /** ms per script (30000) */
  timeout?: number
  /** bytes kept per stream (20480) */
  maxOutput?: number
  /** every run's working folder; a fresh one per run by default */
  cwd?: string
  sandbox?: 'best-effort' | 'required' | 'off'
  sandboxHelper?: string
  allowNetwork?: boolean
  allowNetworkFor?: string[]
  secrets?: Record<string, string | { value: string, skills?: string[] }>
  passEnv?: string[]
  /** true runs the call; false or a reason refuses it */
  onApproval?: (request: ApprovalRequest) => boolean | string | Promise<boolean | string>
  trust?: 'roots' | 'all'
  findSkills?: 'auto' | 'always' | 'never'
  maxPromptChars?: number
  auditLog?: string
  runtimeDir?: string
  maxRuns?: number
}

export type ToolFormat = 'responses' | 'openai' | 'anthropic' | 'gemini' | 'mcp'

export declare class SkillsProvider {
  readonly systemPrompt: string
  readonly tools: Array<Record<string, unknown>>
  readonly chatCompletionsTools: Array<Record<string, unknown>>
  readonly skillNames: string[]
  readonly warnings: string[]
  toolsFor (format: ToolFormat): unknown
  handleToolCall (name: string, args?: Record<string, unknown> | string): Promise<SkillExecutionResult | string | Record<string, unknown>>
  /** the OpenRouter SDK's tool() instances (needs @openrouter/agent or @openrouter/sdk, and zod) */
  readonly sdkTools: unknown[]
  /** a Vercel AI SDK ToolSet; `ai` is required when not given */
  aiSdkTools (ai?: unknown): Record<string, unknown>
}

export declare const TOOL_FORMATS: readonly ToolFormat[]
export declare const SANDBOX_HELPER: string
export declare function createSkillsProvider (skillsDir: string | string[], options?: SkillsProviderOptions): Promise<SkillsProvider>
