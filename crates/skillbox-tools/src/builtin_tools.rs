//! The built-in tools: the skills profile (`load_skill`, `use_skill`, `read_skill_file`,
//! `find_skills`, `define_tool`, `remove_tool`) and the Skills Protocol profile (its 8 tools, exactly as seed
//! 001 defines them).

use serde_json::json;

use crate::tool_spec::ToolSpec;

/// Names of the Skills Protocol's 8 tools, in the seed's order (the runtime owns them).
pub use skillbox_core::tool_names::PROTOCOL_TOOL_NAMES;

fn spec(name: &str, description: &str, parameters: serde_json::Value) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    }
}

/// `load_skill`; `skill_names` (model-invocable skills) become an enum when there are few.
#[must_use]
pub fn load_skill(skill_names: &[&str]) -> ToolSpec {
    let mut skill = json!({
        "type": "string",
        "description": "Name of the skill to load"
    });
    if !skill_names.is_empty() && skill_names.len() <= 200 {
        skill["enum"] = json!(skill_names);
    }
    spec(
        "load_skill",
        "Load the full instructions of a skill. Call this before using a skill for the first time. Pass `arguments` when the skill takes them; pass `list_skills: true` (and no skill) to list every skill.",
        json!({
            "type": "object",
            "properties": {
                "skill": skill,
                "arguments": {
                    "type": "string",
                    "description": "Arguments for the skill, as a person would type them after its name"
                },
                "list_skills": {
                    "type": "boolean",
                    "description": "List the available skills instead of loading one"
                }
            },
            "required": []
        }),
    )
}

/// `use_skill` (seed 002).
#[must_use]
pub fn use_skill() -> ToolSpec {
    spec(
        "use_skill",
        "Run a script from a skill folder. The skill's instructions say which scripts to call and with what arguments.",
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "Name of the skill"},
                "script": {"type": "string", "description": "Script to run: a path inside the skill (e.g. \"scripts/report.py\") or a file name in its root or scripts/ folder"},
                "args": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Arguments passed to the script as separate items (e.g. [\"channels\", \"list\"])"
                }
            },
            "required": ["skill", "script"]
        }),
    )
}

/// `read_skill_file` in the skills profile (seed 004's `loadSkillFile`).
#[must_use]
pub fn read_skill_file() -> ToolSpec {
    spec(
        "read_skill_file",
        "Read a file from a skill's folder (a reference, template or example the skill lists).",
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "Name of the skill"},
                "path": {"type": "string", "description": "Path of the file inside the skill folder (e.g. \"references/guide.md\")"}
            },
            "required": ["skill", "path"]
        }),
    )
}

/// `find_skills`: search the whole catalog by meaning words, for the skills a prompt had no
/// room to list.
#[must_use]
pub fn find_skills() -> ToolSpec {
    spec(
        "find_skills",
        "Search every available skill, including those not listed in your instructions, for the ones that fit a task. Returns the best matches with their descriptions; then call load_skill with the name of the one that fits.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "A few words that describe the task, e.g. \"convert a PDF to text\" or \"post a message to Slack\""},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": skillbox_core::search::MAX_SEARCH_LIMIT,
                    "description": format!("Most skills to return (default {})", skillbox_core::search::DEFAULT_SEARCH_LIMIT)
                }
            },
            "required": ["query"]
        }),
    )
}

/// `define_tool` (seed 000 section 8).
#[must_use]
pub fn define_tool() -> ToolSpec {
    spec(
        "define_tool",
        "Create a new tool at runtime from a JavaScript handler body. It is callable at once; with persistent \"true\" it is saved as a Skill Tools skill.",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Tool name (lowercase letters, digits and underscores)"},
                "description": {"type": "string", "description": "What the tool does"},
                "parameters": {"type": "string", "description": "JSON string of parameter definitions, e.g. {\"text\": {\"type\": \"string\", \"description\": \"…\"}}"},
                "code": {"type": "string", "description": "Body of `async function handler(args)` in JavaScript; return a JSON-serializable value"},
                "persistent": {"type": "string", "enum": ["true", "false"], "description": "\"true\" to save the tool as a skill on disk"}
            },
            "required": ["name", "description", "code"]
        }),
    )
}

/// `remove_tool` (seed 000 section 8).
#[must_use]
pub fn remove_tool() -> ToolSpec {
    spec(
        "remove_tool",
        "Remove a tool created with define_tool. Built-in tools cannot be removed.",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Tool name to remove"}},
            "required": ["name"]
        }),
    )
}

/// The 8 Skills Protocol tools, exactly as seed 001 defines them.
#[must_use]
pub fn protocol_tools() -> Vec<ToolSpec> {
    vec![
        spec(
            "list_skills",
            "Enumerate available skills, optionally filtering by namespace. Results are deterministically sorted.",
            json!({
                "type": "object",
                "properties": {
                    "namespace": {"type": "string", "description": "Optional namespace to filter skills (e.g., 'salesforce')"},
                    "detail": {"type": "string", "enum": ["names", "summary"], "default": "names", "description": "Level of detail to return"},
                    "limit": {"type": "integer", "default": 50, "description": "Maximum number of results"},
                    "cursor": {"type": "string", "description": "Pagination cursor from previous response"}
                }
            }),
        ),
        spec(
            "describe_skill",
            "Retrieve a skill's manifest and documentation frontmatter.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Skill name (e.g., 'salesforce.leads.sync')"},
                    "version": {"type": "string", "description": "Skill version (omit for latest)"},
                    "detail": {"type": "string", "enum": ["manifest", "summary", "full"], "default": "summary", "description": "Level of detail to return"}
                },
                "required": ["name"]
            }),
        ),
        spec(
            "read_skill_file",
            "Read any file in a skill's directory (e.g., SKILL.md, extra docs, schemas).",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Skill name"},
                    "version": {"type": "string", "description": "Skill version (omit for latest)"},
                    "path": {"type": "string", "description": "Path to file within skill directory (e.g., 'SKILL.md')"}
                },
                "required": ["name", "path"]
            }),
        ),
        spec(
            "execute_skill",
            "Execute a skill's entrypoint in an ephemeral sandbox.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Skill name"},
                    "version": {"type": "string", "description": "Skill version (omit for latest)"},
                    "args": {"type": "object", "description": "JSON-serializable arguments to pass to the skill"},
                    "input_blobs": {"type": "array", "items": {"type": "string"}, "description": "Blob IDs to mount in the sandbox"},
                    "timeout_ms": {"type": "integer", "description": "Execution timeout in milliseconds"}
                },
                "required": ["name"]
            }),
        ),
        spec(
            "run_code",
            "Execute LLM-written code in a sandbox with specified skills and blobs mounted.",
            json!({
                "type": "object",
                "properties": {
                    "language": {"type": "string", "enum": ["python"], "description": "Programming language (MVP: python only)"},
                    "code": {"type": "string", "description": "Source code to execute"},
                    "entrypoint": {"type": "string", "default": "main", "description": "Function name to call"},
                    "args": {"type": "object", "description": "Arguments to pass to entrypoint function"},
                    "mount_skills": {"type": "array", "items": {"type": "string"}, "description": "Skill names to mount in sandbox"},
                    "input_blobs": {"type": "array", "items": {"type": "string"}, "description": "Blob IDs to mount in sandbox"},
                    "limits": {"type": "object", "properties": {"timeout_ms": {"type": "integer"}}, "description": "Execution limits"}
                },
                "required": ["language", "code"]
            }),
        ),
        spec(
            "create_blob",
            "Store large content as a blob and return its ID.",
            json!({
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "Content to store"},
                    "kind": {"type": "string", "description": "MIME type (e.g., 'text/plain', 'application/json')"}
                },
                "required": ["content", "kind"]
            }),
        ),
        spec(
            "read_blob",
            "Retrieve a preview of blob content. Full reads discouraged for large blobs.",
            json!({
                "type": "object",
                "properties": {
                    "blob_id": {"type": "string", "description": "Blob identifier"},
                    "mode": {"type": "string", "enum": ["sample_head", "sample_tail", "full"], "default": "sample_head", "description": "How to sample the blob"},
                    "max_bytes": {"type": "integer", "default": 2000, "description": "Maximum bytes to return"}
                },
                "required": ["blob_id"]
            }),
        ),
        spec(
            "load_skills_protocol_guide",
            "Load the Skills Protocol Guide to learn how to use these tools. Call this first if you haven't read the guide yet.",
            json!({"type": "object", "properties": {}}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_profile_has_the_eight_tools_in_order() {
        let names: Vec<String> = protocol_tools().into_iter().map(|tool| tool.name).collect();
        assert_eq!(names, PROTOCOL_TOOL_NAMES);
    }
}
