//! Launcher lines read as package servers: what each spelling of `npx` and `uvx` names, and
//! the lines skillbox cannot install ahead.

use super::*;
use pretty_assertions::assert_eq;

fn read(line: &str) -> Result<PackageServer, String> {
    let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    recognize(&words[0], &words[1..]).expect("a launcher")
}

#[test]
fn npx_lines_name_the_package_version_and_program() {
    let server = read("npx -y @modelcontextprotocol/server-everything@2025.9.25 stdio").unwrap();
    assert_eq!(
        (
            server.registry,
            server.package.as_str(),
            server.requested.as_deref(),
            server.program.as_deref(),
            server.args.clone()
        ),
        (
            PackageRegistry::Npm,
            "@modelcontextprotocol/server-everything",
            Some("2025.9.25"),
            None,
            vec!["stdio".to_owned()]
        )
    );
    assert!(server.pinned());
    assert_eq!(
        server.requirement(),
        "@modelcontextprotocol/server-everything@2025.9.25"
    );

    let open = read("npx --yes @upstash/context7-mcp").unwrap();
    assert_eq!(
        (open.package.as_str(), open.requested.clone()),
        ("@upstash/context7-mcp", None)
    );
    assert!(!open.pinned());

    let ranged = read("npx -y tool@^1.2").unwrap();
    assert!(!ranged.pinned(), "a range is not a pin");

    let with_package = read("npx -y -p some-pkg@1.0.0 some-bin --flag").unwrap();
    assert_eq!(
        (
            with_package.package.as_str(),
            with_package.program.as_deref(),
            with_package.args
        ),
        ("some-pkg", Some("some-bin"), vec!["--flag".to_owned()])
    );
    let equals = read("npx --package=some-pkg -y -- some-bin").unwrap();
    assert_eq!(equals.program.as_deref(), Some("some-bin"));
}

#[test]
fn uvx_lines_name_the_package_version_and_program() {
    let equals = read("uvx mcp-server-time==0.6.2").unwrap();
    assert_eq!(equals.requested.as_deref(), Some("==0.6.2"));
    let server = read("uvx mcp-server-time@0.6.2 --local-timezone=UTC").unwrap();
    assert_eq!(
        (
            server.registry,
            server.package.as_str(),
            server.requested.as_deref(),
            server.args.clone()
        ),
        (
            PackageRegistry::Pypi,
            "mcp-server-time",
            Some("==0.6.2"),
            vec!["--local-timezone=UTC".to_owned()]
        )
    );
    assert!(server.pinned());
    let from = read("uvx --from mcp-server-fetch[extra]>=2025.1 mcp-server-fetch").unwrap();
    assert_eq!(
        (
            from.package.as_str(),
            from.extras.clone(),
            from.requested.as_deref(),
            from.program.as_deref()
        ),
        (
            "mcp-server-fetch",
            vec!["extra".to_owned()],
            Some(">=2025.1"),
            Some("mcp-server-fetch")
        )
    );
    assert!(!from.pinned());
    assert_eq!(from.requirement(), "mcp-server-fetch[extra]>=2025.1");
    let latest = read("uvx mcp-server-fetch@latest").unwrap();
    assert_eq!(latest.requested, None);
    let uv = read("uv tool run --from=pkg==1.0 prog").unwrap();
    assert_eq!(
        (uv.launcher, uv.requested.as_deref()),
        ("uv tool run", Some("==1.0"))
    );
}

#[test]
fn lines_skillbox_cannot_install_ahead_say_why() {
    for (line, expected) in [
        (
            "npx -y git+https://github.com/x/y.git",
            "not an npm registry package",
        ),
        ("npx -y ./local-folder", "not an npm registry package"),
        ("npx -c 'echo hi'", "option `-c`"),
        ("npx -y", "names no package"),
        ("npx -p a -p b bin", "more than one"),
        ("npx -y Capital", "not an npm registry package"),
        ("uvx --with extra tool", "option `--with`"),
        ("uvx --from git+https://x/y tool", "not a version specifier"),
        ("uvx", "names no program"),
    ] {
        let error = read(line).unwrap_err();
        assert!(error.contains(expected), "{line}: {error}");
    }
    assert!(recognize("python3", &["server.py".to_owned()]).is_none());
    assert!(recognize("uv", &["run".to_owned(), "x".to_owned()]).is_none());
}
