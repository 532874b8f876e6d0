//! MCP server declarations read from the frontmatter, `.mcp.json` and Codex's dependencies:
//! what is kept, what is passed over, and the problems named.

use super::*;
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;

fn frontmatter(yaml: &str) -> (Vec<ServerDeclaration>, Vec<Diagnostic>) {
    let document = crate::yaml::parse_document(yaml, 0).unwrap();
    let YamlValue::Mapping(fields) = document.value else {
        panic!("not a mapping")
    };
    let mut diagnostics = Vec::new();
    let servers = from_frontmatter(&fields["mcp-servers"], &mut diagnostics);
    (servers, diagnostics)
}

#[test]
fn the_frontmatter_form_reads_stdio_and_http_servers() {
    let (servers, diagnostics) = frontmatter(
        "mcp-servers:\n  weather:\n    command: python3\n    args: [server.py, --quiet]\n    env: [WEATHER_KEY]\n  linear:\n    url: https://mcp.linear.app/mcp\n",
    );
    assert_eq!(diagnostics, Vec::new());
    assert_eq!(
        servers,
        vec![
            ServerDeclaration {
                name: "weather".to_owned(),
                transport: ServerTransport::Stdio {
                    command: "python3".to_owned(),
                    args: vec!["server.py".to_owned(), "--quiet".to_owned()],
                    env: vec!["WEATHER_KEY".to_owned()],
                    env_values: BTreeMap::new(),
                },
                declared_in: "SKILL.md".to_owned(),
            },
            ServerDeclaration {
                name: "linear".to_owned(),
                transport: ServerTransport::StreamableHttp {
                    url: "https://mcp.linear.app/mcp".to_owned()
                },
                declared_in: "SKILL.md".to_owned(),
            },
        ]
    );
}

#[test]
fn frontmatter_problems_name_the_field_and_line() {
    let cases = [
        (
            "mcp-servers:\n  Bad Name:\n    command: x\n",
            "mcp-servers.Bad Name",
            "lowercase",
        ),
        (
            "mcp-servers:\n  a:\n    command: ../../bin/evil\n",
            "mcp-servers.a.command",
            "leaves the skill",
        ),
        (
            "mcp-servers:\n  a:\n    url: ftp://x\n",
            "mcp-servers.a.url",
            "not an `http://`",
        ),
        (
            "mcp-servers:\n  a:\n    command: x\n    url: https://x\n",
            "mcp-servers.a.url",
            "both",
        ),
        (
            "mcp-servers:\n  a:\n    comand: x\n",
            "mcp-servers.a.comand",
            "unknown key",
        ),
        (
            "mcp-servers:\n  a:\n    command: x\n    env: [not-a-name]\n",
            "mcp-servers.a.env",
            "not an environment",
        ),
        ("mcp-servers: [a]\n", "mcp-servers", "must be a mapping"),
        (
            "mcp-servers:\n  a__b:\n    command: x\n",
            "mcp-servers.a__b",
            "`__`",
        ),
    ];
    for (yaml, field, wanted) in cases {
        let (servers, diagnostics) = frontmatter(yaml);
        assert!(servers.is_empty(), "{yaml}");
        let diagnostic = diagnostics
            .first()
            .unwrap_or_else(|| panic!("{yaml}: no diagnostic"));
        assert_eq!(diagnostic.code, DiagnosticCode::ServerDeclarationInvalid);
        assert_eq!(diagnostic.field.as_deref(), Some(field), "{yaml}");
        assert!(
            diagnostic.message.contains(wanted),
            "{yaml}: {}",
            diagnostic.message
        );
        assert!(diagnostic.line.is_some(), "{yaml}: no position");
    }
}

#[test]
fn claudes_mcp_json_is_read_keeping_env_names_only() {
    let (servers, diagnostics) = parse_mcp_json(
        r#"{"mcpServers": {"weather": {"command": "python3", "args": ["server.py"], "env": {"WEATHER_KEY": "sk-literal"}},
            "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
    );
    assert_eq!(
        servers
            .iter()
            .map(|server| (server.name.as_str(), server.transport.clone()))
            .collect::<Vec<_>>(),
        vec![
            (
                "weather",
                ServerTransport::Stdio {
                    command: "python3".to_owned(),
                    args: vec!["server.py".to_owned()],
                    env: vec!["WEATHER_KEY".to_owned()],
                    env_values: BTreeMap::new(),
                }
            ),
            (
                "docs",
                ServerTransport::StreamableHttp {
                    url: "http://127.0.0.1:9/mcp".to_owned()
                }
            ),
        ]
    );
    assert_eq!(diagnostics.len(), 1);
    assert!(
        diagnostics[0].message.contains("not passed"),
        "{:?}",
        diagnostics[0]
    );
    let (_, broken) = parse_mcp_json("{\"mcpServers\": ");
    assert!(broken[0].message.contains("is not JSON") && broken[0].line.is_some());
}

#[test]
fn codex_dependencies_are_read_and_other_entries_passed_over() {
    let (servers, diagnostics) = parse_codex_sidecar(
        "interface:\n  display_name: GitHub\ndependencies:\n  tools:\n    - type: mcp\n      value: github\n      transport: streamable_http\n      url: https://api.githubcopilot.com/mcp/\n    - type: mcp\n      value: local\n      transport: stdio\n      command: npx -y some-server\n    - type: cli\n      value: gh\n    - type: mcp\n      value: bad\n      transport: stdio\n      url: https://x\n",
    );
    assert_eq!(
        servers
            .iter()
            .map(|server| (server.name.as_str(), server.transport.clone()))
            .collect::<Vec<_>>(),
        vec![
            (
                "github",
                ServerTransport::StreamableHttp {
                    url: "https://api.githubcopilot.com/mcp/".to_owned()
                }
            ),
            (
                "local",
                ServerTransport::Stdio {
                    command: "npx".to_owned(),
                    args: vec!["-y".to_owned(), "some-server".to_owned()],
                    env: Vec::new(),
                    env_values: BTreeMap::new(),
                }
            ),
        ]
    );
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(
        diagnostics[0].field.as_deref(),
        Some("dependencies.tools[3]")
    );
    assert!(diagnostics[0].line.is_some());
}

#[test]
fn the_same_name_declared_differently_is_an_error() {
    let stdio = |command: &str, declared_in: &str| ServerDeclaration {
        name: "weather".to_owned(),
        transport: ServerTransport::Stdio {
            command: command.to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            env_values: BTreeMap::new(),
        },
        declared_in: declared_in.to_owned(),
    };
    let mut diagnostics = Vec::new();
    let merged = merge(
        vec![stdio("python3", "SKILL.md")],
        vec![stdio("python3", MCP_JSON_FILE)],
        &mut diagnostics,
    );
    assert_eq!((merged.len(), diagnostics.len()), (1, 0));
    let merged = merge(
        vec![stdio("python3", "SKILL.md")],
        vec![stdio("node", MCP_JSON_FILE)],
        &mut diagnostics,
    );
    assert_eq!(merged[0].declared_in, "SKILL.md");
    assert!(
        diagnostics[0].message.contains("differently"),
        "{diagnostics:?}"
    );
}
