// The ES module entry: the same objects as the CommonJS one.
import skillbox from './index.js'

export const { createSkillsProvider, SkillsProvider, TOOL_FORMATS, SANDBOX_HELPER } = skillbox
export default skillbox
