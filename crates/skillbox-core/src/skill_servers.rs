//! The MCP servers a skill declares it needs (issue 27, `docs/design/skill-servers.md`): read
//! from skillbox's frontmatter form (`mcp-servers:`), from Claude's plugin shape (a `.mcp.json`
//! beside `SKILL.md`) and from Codex's `agents/openai.yaml` (`dependencies.tools`), merged by
//! server name, every problem a diagnostic naming
//! the file, the field and its position. Starting the servers is the tool layer's; this module
//! only says what a skill asks for.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::Serialize;

use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity, TextPosition};
use crate::package_server::PackageServer;
use crate::properties::is_environment_name;
use crate::server_variables::{command_in_skill_folder, parse_template};
use crate::yaml::{YamlNode, YamlValue};

/// Claude's plugin shape of server declarations, in the skill folder.
pub const MCP_JSON_FILE: &str = ".mcp.json";
/// Codex's sidecar, whose `dependencies.tools` entries of `type: mcp` declare servers.
pub const CODEX_SIDECAR_FILE: &str = "agents/openai.yaml";
/// Longest server name: it prefixes each of its tools' names (`server__tool`), which providers
/// cap at 64 characters.
pub const MAX_SERVER_NAME_CHARS: usize = 32;
/// Servers one skill may declare.
pub const MAX_SERVERS_PER_SKILL: usize = 16;
/// Arguments and environment names one server may list.
pub const MAX_SERVER_LIST_ITEMS: usize = 64;

/// How skillbox reaches a declared server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum ServerTransport {
    /// A program skillbox starts (in the sandbox, in the skill's folder) and speaks to over its
    /// standard input and output.
    Stdio {
        /// The program: a name looked up on `PATH`, or a path inside the skill.
        command: String,
        /// Its arguments (`${CLAUDE_PLUGIN_ROOT}`, `${VAR}` and `${VAR:-default}` expand when
        /// it starts: `server_variables`).
        args: Vec<String>,
        /// Environment variables it may receive (names: values come from the user's grants).
        env: Vec<String>,
        /// Values of some of those variables given as templates (`.mcp.json`'s
        /// `"DB": "${CLAUDE_PLUGIN_ROOT}/db"`, `"KEY": "${MY_KEY}"`), expanded when it starts.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env_values: BTreeMap<String, String>,
    },
    /// A server at a URL, spoken to over MCP's streamable HTTP.
    StreamableHttp {
        /// `http://` or `https://`.
        url: String,
    },
}

/// One server a skill needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerDeclaration {
    /// Its name (the prefix of its tools' names).
    pub name: String,
    /// How it is reached.
    #[serde(flatten)]
    pub transport: ServerTransport,
    /// The file that declares it (`SKILL.md` or `.mcp.json`).
    pub declared_in: String,
}

impl ServerDeclaration {
    /// The package from npm or PyPI its command runs (`npx …`, `uvx …`), if it runs one:
    /// `Some(Err(why))` for a launcher line skillbox cannot install ahead.
    #[must_use]
    pub fn package(&self) -> Option<Result<PackageServer, String>> {
        match &self.transport {
            ServerTransport::Stdio { command, args, .. } => {
                crate::package_server::recognize(command, args)
            }
            ServerTransport::StreamableHttp { .. } => None,
        }
    }
}

/// What `validate` says about a server that is a package (`None` for any other): what it
/// installs and runs (info), an open version (warning: `add` pins the one it resolves), a
/// launcher line that cannot be installed ahead (warning: it cannot start in the sandbox, which
/// has no network).
#[must_use]
pub fn package_note(server: &ServerDeclaration) -> Option<Diagnostic> {
    let (severity, said, hint) = match server.package()? {
        Ok(package) if package.pinned() => (
            Severity::Info,
            package.describe(),
            "`skillbox add` and `install` install it ahead into the store; it runs from there, offline, in the sandbox",
        ),
        Ok(package) => (
            Severity::Warning,
            package.describe(),
            "pin a version (`name@1.2.3`, `name==1.2.3`); until then `skillbox add` pins the version it resolves in `skillbox.lock`",
        ),
        Err(why) => (
            Severity::Warning,
            why,
            "skillbox installs `npx -y PACKAGE@VERSION` and `uvx PACKAGE==VERSION` servers ahead; any other launcher line needs the network, which the sandbox does not give",
        ),
    };
    Some(
        Diagnostic::new(
            severity,
            DiagnosticCode::ServerPackage,
            format!("server `{}`: {said}", server.name),
        )
        .for_field(format!("mcp-servers.{}", server.name))
        .with_hint(hint),
    )
}

/// A stdio server's command as skillbox runs it (`${CLAUDE_PLUGIN_ROOT}/x` is `./x`), or why
/// it cannot run it; its arguments' templates are checked too.
fn stdio_command(command: &str, args: &[String]) -> Result<String, String> {
    let command = command_in_skill_folder(command).unwrap_or_else(|| command.to_owned());
    if command.contains("${") {
        return Err(
            "`command` takes a variable; only `${CLAUDE_PLUGIN_ROOT}/…` (the skill's folder) may start it"
                .to_owned(),
        );
    }
    if let Some(why) = command_problem(&command) {
        return Err(format!("`command` {why}"));
    }
    for arg in args {
        parse_template(arg).map_err(|why| format!("`args`: {why}"))?;
    }
    Ok(command)
}

/// Whether `variable` tells the C library or the dynamic loader what to load (`LD_PRELOAD`,
/// `GCONV_PATH`, …): a skill's file never sets one.
fn is_loader_variable(variable: &str) -> bool {
    variable.starts_with("LD_")
        || variable.starts_with("MALLOC_")
        || matches!(
            variable,
            "GCONV_PATH" | "GLIBC_TUNABLES" | "LOCPATH" | "NLSPATH" | "HOSTALIASES" | "RES_OPTIONS"
        )
}

/// Why `name` cannot name a server, if it cannot.
#[must_use]
pub fn server_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if name.chars().count() > MAX_SERVER_NAME_CHARS {
        return Some(format!(
            "it is longer than {MAX_SERVER_NAME_CHARS} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Some("use lowercase letters, digits, `-` and `_` only".to_owned());
    }
    if name.contains("__") {
        return Some("`__` separates a server's name from its tools' names".to_owned());
    }
    None
}

/// A problem with a declaration, before it is placed in a file.
fn problem(
    message: impl Into<String>,
    field: &str,
    at: Option<TextPosition>,
    hint: &str,
) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::ServerDeclarationInvalid, message.into())
        .at(at)
        .for_field(field.to_owned())
        .with_hint(hint.to_owned())
}

/// The problem of a skill declaring more than [`MAX_SERVERS_PER_SKILL`] servers, at the first
/// one past it (`field`, `at`).
fn too_many_servers(field: &str, at: Option<TextPosition>) -> Diagnostic {
    problem(
        format!("more than {MAX_SERVERS_PER_SKILL} servers are declared; the rest are ignored"),
        field,
        at,
        "declare the servers the skill's instructions use",
    )
}

/// Why `command` cannot start a server, if it cannot: a path must stay inside the skill.
fn command_problem(command: &str) -> Option<&'static str> {
    if command.trim().is_empty() {
        return Some("is empty");
    }
    if command.contains('\0') {
        return Some("holds a NUL character");
    }
    if command.contains('/')
        && !command.starts_with('/')
        && crate::source::contained_relative_path(command).is_err()
    {
        return Some("leaves the skill's folder");
    }
    None
}

/// Why `url` cannot reach a server, if it cannot.
fn url_problem(url: &str) -> Option<&'static str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        None => Some("is not an `http://` or `https://` URL"),
        Some(rest) if rest.split(['/', '?', '#']).next().unwrap_or("").is_empty() => {
            Some("names no host")
        }
        Some(_) if url.chars().any(|c| c.is_whitespace() || c.is_control()) => {
            Some("holds spaces or control characters")
        }
        Some(_) => None,
    }
}

/// The servers of the frontmatter's `mcp-servers` mapping (`name: {command, args, env}` or
/// `name: {url}`); problems go to `diagnostics`.
pub(crate) fn from_frontmatter(
    node: &YamlNode,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ServerDeclaration> {
    const FIELD: &str = "mcp-servers";
    const SHAPE: &str = "write `mcp-servers:` as a mapping of names to `{command: …, args: […], env: [NAME]}` or `{url: https://…}`";
    let YamlValue::Mapping(entries) = &node.value else {
        if !matches!(node.value, YamlValue::Null) {
            diagnostics.push(problem(
                "field `mcp-servers` must be a mapping of server names to servers",
                FIELD,
                node.field_position(),
                SHAPE,
            ));
        }
        return Vec::new();
    };
    let mut servers = Vec::new();
    for (name, entry) in entries {
        let field = format!("{FIELD}.{name}");
        if servers.len() == MAX_SERVERS_PER_SKILL {
            diagnostics.push(too_many_servers(&field, entry.field_position()));
            break;
        }
        if let Some(why) = server_name_problem(name) {
            diagnostics.push(problem(
                format!("server name `{name}`: {why}"),
                &field,
                entry.field_position(),
                "name the server like `weather` or `issue-tracker`",
            ));
            continue;
        }
        let YamlValue::Mapping(settings) = &entry.value else {
            diagnostics.push(problem(
                format!("server `{name}` must be a mapping"),
                &field,
                entry.field_position(),
                SHAPE,
            ));
            continue;
        };
        let mut valid = true;
        for (key, value) in settings {
            if !matches!(key.as_str(), "command" | "args" | "env" | "url") {
                diagnostics.push(problem(
                    format!("server `{name}` has an unknown key `{key}`"),
                    &format!("{field}.{key}"),
                    value.field_position(),
                    "a server has `command`, `args` and `env` (stdio), or `url` (HTTP)",
                ));
                valid = false;
            }
        }
        let text = |key: &str| settings.get(key).map(|value| (value.scalar_text(), value));
        let list = |key: &str, diagnostics: &mut Vec<Diagnostic>| -> Option<Vec<String>> {
            let Some(value) = settings.get(key) else {
                return Some(Vec::new());
            };
            let items: Option<Vec<String>> = match &value.value {
                YamlValue::Sequence(items) if items.len() <= MAX_SERVER_LIST_ITEMS => {
                    items.iter().map(YamlNode::scalar_text).collect()
                }
                _ => None,
            };
            if items.is_none() {
                diagnostics.push(problem(
                    format!("server `{name}`: `{key}` must be a list of at most {MAX_SERVER_LIST_ITEMS} strings"),
                    &format!("{field}.{key}"),
                    value.field_position(),
                    SHAPE,
                ));
            }
            items
        };
        let transport = match (text("command"), text("url")) {
            (Some(_), Some((_, url))) => {
                diagnostics.push(problem(
                    format!("server `{name}` has both `command` and `url`"),
                    &format!("{field}.url"),
                    url.field_position(),
                    "a server is started (`command`) or reached (`url`), not both",
                ));
                None
            }
            (Some((Some(command), node)), None) => {
                let args = list("args", diagnostics);
                let env = list("env", diagnostics);
                let checked = stdio_command(&command, args.as_deref().unwrap_or_default());
                if let Err(why) = &checked {
                    diagnostics.push(problem(format!("server `{name}`: {why}"), &format!("{field}.command"), node.field_position(), "name a program on PATH (`python3`, `node`, `npx`) or a file inside the skill"));
                    None
                } else if let (Ok(command), Some(args), Some(env)) = (checked, args, env) {
                    let bad: Vec<&String> = env
                        .iter()
                        .filter(|variable| !is_environment_name(variable))
                        .collect();
                    if let Some(variable) = bad.first() {
                        diagnostics.push(problem(format!("server `{name}`: `env` entry `{variable}` is not an environment variable name"), &format!("{field}.env"), settings.get("env").and_then(YamlNode::field_position), "list names like `API_TOKEN`; values come from `--secret` grants"));
                        None
                    } else {
                        Some(ServerTransport::Stdio {
                            command,
                            args,
                            env,
                            env_values: BTreeMap::new(),
                        })
                    }
                } else {
                    None
                }
            }
            (None, Some((Some(url), node))) => {
                for key in ["args", "env"] {
                    if let Some(value) = settings.get(key) {
                        diagnostics.push(problem(
                            format!(
                                "server `{name}`: `{key}` belongs to a started server, not a URL"
                            ),
                            &format!("{field}.{key}"),
                            value.field_position(),
                            "remove it",
                        ));
                    }
                }
                match url_problem(&url) {
                    Some(why) => {
                        diagnostics.push(problem(format!("server `{name}`: `url` {why}"), &format!("{field}.url"), node.field_position(), "give the server's streamable HTTP endpoint, e.g. `https://mcp.example.com/mcp`"));
                        None
                    }
                    None => Some(ServerTransport::StreamableHttp { url }),
                }
            }
            (Some((None, node)), None) | (None, Some((None, node))) => {
                diagnostics.push(problem(
                    format!("server `{name}`: `command` and `url` must be strings"),
                    &field,
                    node.field_position(),
                    SHAPE,
                ));
                None
            }
            (None, None) => {
                diagnostics.push(problem(
                    format!("server `{name}` has neither `command` nor `url`"),
                    &field,
                    entry.field_position(),
                    SHAPE,
                ));
                None
            }
        };
        if let (Some(transport), true) = (transport, valid) {
            servers.push(ServerDeclaration {
                name: name.clone(),
                transport,
                declared_in: "SKILL.md".to_owned(),
            });
        }
    }
    servers
}

/// The servers of a `.mcp.json` in Claude's plugin shape: `{"mcpServers": {"name":
/// {"command", "args", "env"} | {"type": "http", "url"}}}`. `env` values there are literal;
/// only the names are kept (a warning says so), since a server gets values from the user's
/// grants, never from a file a skill ships.
#[must_use]
pub fn parse_mcp_json(text: &str) -> (Vec<ServerDeclaration>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let document: serde_json::Value = match serde_json::from_str(text) {
        Ok(document) => document,
        Err(error) => {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::ServerDeclarationInvalid,
                    format!("`{MCP_JSON_FILE}` is not JSON: {error}"),
                )
                .at(Some(TextPosition {
                    line: u64::try_from(error.line()).unwrap_or(u64::MAX),
                    column: u64::try_from(error.column()).unwrap_or(u64::MAX),
                }))
                .with_hint(
                    "write `{\"mcpServers\": {\"name\": {\"command\": \"…\", \"args\": […]}}}`",
                ),
            );
            return (Vec::new(), diagnostics);
        }
    };
    let Some(entries) = document
        .get("mcpServers")
        .and_then(serde_json::Value::as_object)
    else {
        diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::ServerDeclarationInvalid,
                format!("`{MCP_JSON_FILE}` has no `mcpServers` object"),
            )
            .for_field("mcpServers")
            .with_hint("write `{\"mcpServers\": {\"name\": {\"command\": \"…\", \"args\": […]}}}`"),
        );
        return (Vec::new(), diagnostics);
    };
    let mut servers = Vec::new();
    for (name, entry) in entries.iter().take(MAX_SERVERS_PER_SKILL) {
        let field = format!("mcpServers.{name}");
        let fail = |message: String, diagnostics: &mut Vec<Diagnostic>| {
            diagnostics.push(problem(
                message,
                &field,
                None,
                "a server has `command`, `args` and `env`, or `type: http` and `url`",
            ));
        };
        if let Some(why) = server_name_problem(name) {
            fail(format!("server name `{name}`: {why}"), &mut diagnostics);
            continue;
        }
        let strings = |key: &str| -> Option<Vec<String>> {
            match entry.get(key) {
                None => Some(Vec::new()),
                Some(serde_json::Value::Array(items)) if items.len() <= MAX_SERVER_LIST_ITEMS => {
                    items
                        .iter()
                        .map(|item| item.as_str().map(str::to_owned))
                        .collect()
                }
                Some(_) => None,
            }
        };
        let transport = match (
            entry.get("command").and_then(serde_json::Value::as_str),
            entry.get("url").and_then(serde_json::Value::as_str),
        ) {
            (Some(command), None) => {
                let mut env_values = BTreeMap::new();
                let env: Vec<String> = match entry.get("env") {
                    None => Vec::new(),
                    Some(serde_json::Value::Object(values)) => {
                        for (variable, value) in values {
                            let Some(value) = value.as_str().filter(|value| value.contains("${"))
                            else {
                                continue;
                            };
                            if is_loader_variable(variable) {
                                diagnostics.push(
                                    Diagnostic::warning(
                                        DiagnosticCode::ServerDeclarationInvalid,
                                        format!("server `{name}`: `env.{variable}` would change how programs are loaded; it is not passed"),
                                    )
                                    .for_field(format!("{field}.env.{variable}")),
                                );
                                continue;
                            }
                            if let Err(why) = parse_template(value) {
                                fail(
                                    format!("server `{name}`: `env.{variable}`: {why}"),
                                    &mut diagnostics,
                                );
                                continue;
                            }
                            env_values.insert(variable.clone(), value.to_owned());
                        }
                        if values.iter().any(|(variable, value)| {
                            value.as_str().is_some_and(|value| !value.is_empty())
                                && !env_values.contains_key(variable)
                        }) {
                            diagnostics.push(
                                Diagnostic::warning(
                                    DiagnosticCode::ServerDeclarationInvalid,
                                    format!("server `{name}`: literal `env` values in `{MCP_JSON_FILE}` are not passed; only the names are kept"),
                                )
                                .for_field(format!("{field}.env"))
                                .with_hint("grant each variable with `--secret NAME` when it should reach the server, or write its value as `${NAME}`, `${NAME:-default}` or `${CLAUDE_PLUGIN_ROOT}/…`"),
                            );
                        }
                        values.keys().cloned().collect()
                    }
                    Some(_) => {
                        fail(
                            format!("server `{name}`: `env` must be an object"),
                            &mut diagnostics,
                        );
                        continue;
                    }
                };
                let args = strings("args");
                match (
                    stdio_command(command, args.as_deref().unwrap_or_default()),
                    args,
                ) {
                    (Err(why), _) => {
                        fail(format!("server `{name}`: {why}"), &mut diagnostics);
                        continue;
                    }
                    (Ok(_), None) => {
                        fail(
                            format!(
                                "server `{name}`: `args` must be a list of at most {MAX_SERVER_LIST_ITEMS} strings"
                            ),
                            &mut diagnostics,
                        );
                        continue;
                    }
                    (Ok(_), Some(_))
                        if env.iter().any(|variable| !is_environment_name(variable)) =>
                    {
                        fail(
                            format!(
                                "server `{name}`: an `env` name is not an environment variable name"
                            ),
                            &mut diagnostics,
                        );
                        continue;
                    }
                    (Ok(command), Some(args)) => ServerTransport::Stdio {
                        command,
                        args,
                        env,
                        env_values,
                    },
                }
            }
            (None, Some(url)) => match url_problem(url) {
                Some(why) => {
                    fail(format!("server `{name}`: `url` {why}"), &mut diagnostics);
                    continue;
                }
                None => ServerTransport::StreamableHttp {
                    url: url.to_owned(),
                },
            },
            (Some(_), Some(_)) => {
                fail(
                    format!("server `{name}` has both `command` and `url`"),
                    &mut diagnostics,
                );
                continue;
            }
            (None, None) => {
                fail(
                    format!("server `{name}` has neither a `command` nor a `url` string"),
                    &mut diagnostics,
                );
                continue;
            }
        };
        servers.push(ServerDeclaration {
            name: name.clone(),
            transport,
            declared_in: MCP_JSON_FILE.to_owned(),
        });
    }
    if entries.len() > MAX_SERVERS_PER_SKILL {
        diagnostics.push(too_many_servers("mcpServers", None));
    }
    (servers, diagnostics)
}

/// The servers of Codex's `agents/openai.yaml`: its `dependencies.tools` entries of `type: mcp`
/// (`value` is the name; `transport` `stdio` with `command`, a command line split at spaces, or
/// `streamable_http` with `url`; without `transport`, whichever of the two is given). Entries of
/// other types are Codex's own and are passed over; the rest of the file is not skillbox's.
#[must_use]
pub fn parse_codex_sidecar(text: &str) -> (Vec<ServerDeclaration>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let document = match crate::yaml::parse_document(text, 0) {
        Ok(document) => document,
        Err(error) => {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::ServerDeclarationInvalid,
                    format!("`{CODEX_SIDECAR_FILE}` is not YAML: {}", error.message),
                )
                .at(error.position)
                .with_hint("fix the YAML, or remove the file"),
            );
            return (Vec::new(), diagnostics);
        }
    };
    let YamlValue::Mapping(top) = &document.value else {
        return (Vec::new(), diagnostics);
    };
    let tools = top
        .get("dependencies")
        .and_then(|dependencies| match &dependencies.value {
            YamlValue::Mapping(dependencies) => dependencies.get("tools"),
            _ => None,
        });
    let Some(tools) = tools else {
        return (Vec::new(), diagnostics);
    };
    let YamlValue::Sequence(entries) = &tools.value else {
        diagnostics.push(problem(
            "`dependencies.tools` must be a list",
            "dependencies.tools",
            tools.field_position(),
            "list entries like `{type: mcp, value: NAME, transport: stdio, command: …}`",
        ));
        return (Vec::new(), diagnostics);
    };
    let mut servers = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let field = format!("dependencies.tools[{index}]");
        let YamlValue::Mapping(settings) = &entry.value else {
            diagnostics.push(problem(
                format!("`{field}` must be a mapping"),
                &field,
                entry.field_position(),
                "write `{type: mcp, value: NAME, …}`",
            ));
            continue;
        };
        let text = |key: &str| settings.get(key).and_then(YamlNode::scalar_text);
        if text("type").as_deref() != Some("mcp") {
            continue;
        }
        if servers.len() == MAX_SERVERS_PER_SKILL {
            diagnostics.push(too_many_servers(&field, entry.field_position()));
            break;
        }
        let fail = |message: String, diagnostics: &mut Vec<Diagnostic>| {
            diagnostics.push(problem(message, &field, entry.field_position(), "an `mcp` entry has `value` (its name) and `command` (stdio) or `url` (streamable_http)"));
        };
        let Some(name) = text("value") else {
            fail(
                format!("`{field}` has no `value` (the server's name)"),
                &mut diagnostics,
            );
            continue;
        };
        if let Some(why) = server_name_problem(&name) {
            fail(format!("server name `{name}`: {why}"), &mut diagnostics);
            continue;
        }
        let transport = match (text("transport").as_deref(), text("command"), text("url")) {
            (Some("stdio") | None, Some(command), None) => {
                let mut words = command.split_whitespace().map(str::to_owned);
                let program = words.next().unwrap_or_default();
                let args: Vec<String> = words.collect();
                match stdio_command(&program, &args) {
                    Err(why) => {
                        fail(format!("server `{name}`: {why}"), &mut diagnostics);
                        continue;
                    }
                    Ok(command) => ServerTransport::Stdio {
                        command,
                        args,
                        env: Vec::new(),
                        env_values: BTreeMap::new(),
                    },
                }
            }
            (Some("streamable_http") | None, None, Some(url)) => match url_problem(&url) {
                Some(why) => {
                    fail(format!("server `{name}`: `url` {why}"), &mut diagnostics);
                    continue;
                }
                None => ServerTransport::StreamableHttp { url },
            },
            (transport, command, url) => {
                fail(
                    format!(
                        "server `{name}`: transport `{}` with {} and {}",
                        transport.unwrap_or("(none)"),
                        if command.is_some() {
                            "a `command`"
                        } else {
                            "no `command`"
                        },
                        if url.is_some() { "a `url`" } else { "no `url`" }
                    ),
                    &mut diagnostics,
                );
                continue;
            }
        };
        servers.push(ServerDeclaration {
            name,
            transport,
            declared_in: CODEX_SIDECAR_FILE.to_owned(),
        });
    }
    (servers, diagnostics)
}

/// The servers of both forms together, by name: the same name declared twice alike is one
/// server; declared twice differently, an error naming both files (the frontmatter's is kept).
pub(crate) fn merge(
    frontmatter: Vec<ServerDeclaration>,
    mcp_json: Vec<ServerDeclaration>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ServerDeclaration> {
    let mut merged: IndexMap<String, ServerDeclaration> = IndexMap::new();
    for server in frontmatter.into_iter().chain(mcp_json) {
        match merged.get(&server.name) {
            Some(kept) if kept.transport != server.transport => diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::ServerDeclarationInvalid,
                    format!(
                        "server `{}` is declared in {} and in {} differently; the declaration in {} is used",
                        server.name, kept.declared_in, server.declared_in, kept.declared_in
                    ),
                )
                .for_field(format!("mcp-servers.{}", server.name))
                .with_hint("declare each server once, or the same way in both files"),
            ),
            Some(_) => {}
            None => {
                merged.insert(server.name.clone(), server);
            }
        }
    }
    merged.into_values().collect()
}

#[cfg(test)]
#[path = "skill_servers_tests.rs"]
mod tests;
