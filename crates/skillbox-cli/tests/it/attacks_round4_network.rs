//! Round 4 of the outside attack on installs, over the network, through the real binary: an
//! index that sends the install to another origin, redirects that cross origins, a token sent
//! to a port it was not for or before anyone asked, a git server that stalls, and one whose
//! list of refs never ends. Real servers on loopback; two ports are two origins.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillbox_testkit::static_server::Response;
use skillbox_testkit::{GitRepo, StaticServer};

use super::install_project::{Project, sha256};
use super::support::skill_md;

/// The path of a discovery index on a site.
const INDEX: &str = "/.well-known/agent-skills/index.json";

/// A `.skill` archive (a zip) holding one skill, `name`.
fn skill_archive(name: &str) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    writer
        .start_file(
            "SKILL.md",
            zip::write::SimpleFileOptions::default().unix_permissions(0o644),
        )
        .unwrap();
    writer
        .write_all(skill_md(name, "An archived skill. Use when testing.").as_bytes())
        .unwrap();
    writer.finish().unwrap().into_inner()
}

/// An index entry for the `SKILL.md` of `name` at `url` (relative to the index, or absolute).
fn skill_md_entry(name: &str, url: &str) -> Value {
    let text = skill_md(name, "An indexed skill. Use when testing.");
    json!({"name": name, "type": "skill-md", "description": "An indexed skill.",
           "url": url, "digest": sha256(text.as_bytes())})
}

/// Serve `skill_md(name, …)` at `path` of `server`.
fn serve_skill_md(server: &StaticServer, path: &str, name: &str) {
    server.route(
        path,
        Response::ok(skill_md(name, "An indexed skill. Use when testing.")),
    );
}

/// The port of a loopback server's base URL.
fn port_of(server: &StaticServer) -> u16 {
    server
        .base_url()
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .unwrap()
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_index_artifact_on_another_origin_is_fetched_only_from_an_allowed_host() {
    let (site, elsewhere) = (
        StaticServer::without_folder(),
        StaticServer::without_folder(),
    );
    serve_skill_md(&elsewhere, "/pdf/SKILL.md", "pdf");
    site.route(
        INDEX,
        Response::ok(
            json!({"skills": [skill_md_entry("pdf", &elsewhere.url("/pdf/SKILL.md"))]}).to_string(),
        ),
    );
    let project = Project::new();
    let stderr = project.refused(&["add", &site.base_url()]);
    let allow = format!("--allow-host 127.0.0.1:{}", port_of(&elsewhere));
    assert!(
        stderr.contains("another origin") && stderr.contains(&allow),
        "{stderr}"
    );
    assert!(
        elsewhere.requests().is_empty(),
        "the other origin was asked: {:?}",
        elsewhere.requests()
    );
    project.assert_untouched();

    // Another port of the same host is another origin too; allowing it lets the install go on.
    let allowed = format!("127.0.0.1:{}", port_of(&elsewhere));
    project.ok(&["add", &site.base_url(), "--allow-host", &allowed]);
    assert!(project.installed("pdf").join("SKILL.md").is_file());
    assert_eq!(elsewhere.requests().len(), 1);

    // A value that is not a host says what to write.
    let (code, _, stderr) = project.run(&[
        "add",
        &site.base_url(),
        "--allow-host",
        "http://127.0.0.1:1/",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("HOST:PORT"), "{stderr}");
}

#[test]
fn a_redirect_to_another_origin_is_refused_for_archives_indexes_and_artifacts() {
    let (site, elsewhere) = (
        StaticServer::without_folder(),
        StaticServer::without_folder(),
    );
    elsewhere.route("/pdf.skill", Response::ok(skill_archive("pdf")));
    elsewhere.route(
        INDEX,
        Response::ok(json!({"skills": [skill_md_entry("idx", "idx/SKILL.md")]}).to_string()),
    );
    serve_skill_md(&elsewhere, "/art/SKILL.md", "art");
    // An archive, an index and an artifact, each redirected to the other origin.
    site.redirect("/pdf.skill", &elsewhere.url("/pdf.skill"));
    site.redirect(INDEX, &elsewhere.url(INDEX));
    let artifacts = StaticServer::without_folder();
    artifacts.route(
        INDEX,
        Response::ok(json!({"skills": [skill_md_entry("art", "/art/SKILL.md")]}).to_string()),
    );
    artifacts.redirect("/art/SKILL.md", &elsewhere.url("/art/SKILL.md"));
    let elsewhere_origin = format!("`http://127.0.0.1:{}`", port_of(&elsewhere));
    for source in [
        site.url("/pdf.skill"),
        site.base_url(),
        artifacts.base_url(),
    ] {
        let project = Project::new();
        let stderr = project.refused(&["add", &source]);
        assert!(
            stderr.contains("redirects to another origin")
                && stderr.contains(&elsewhere_origin)
                && stderr.contains("--allow-host"),
            "{source}: {stderr}"
        );
        project.assert_untouched();
    }
    assert!(
        elsewhere.requests().is_empty(),
        "a redirect was followed to another origin: {:?}",
        elsewhere.requests()
    );

    // A redirect within one origin is followed; to an allowed host, too.
    site.redirect("/old/pdf.skill", "/current/pdf.skill");
    site.route("/current/pdf.skill", Response::ok(skill_archive("pdf")));
    let project = Project::new();
    project.ok(&["add", &site.url("/old/pdf.skill")]);
    assert!(project.installed("pdf").join("SKILL.md").is_file());
    let project = Project::new();
    let allowed = format!("127.0.0.1:{}", port_of(&elsewhere));
    project.ok(&["add", &site.url("/pdf.skill"), "--allow-host", &allowed]);
    assert!(project.installed("pdf").join("SKILL.md").is_file());
}

#[test]
fn a_token_goes_only_to_the_origin_it_names_and_only_once_that_origin_asks() {
    // Origin A holds a private artifact; B, on another port of the same host, asks for a token
    // too, but the person gave none for it.
    let (a, b) = (
        StaticServer::without_folder(),
        StaticServer::without_folder(),
    );
    for (server, name) in [(&a, "alpha"), (&b, "beta")] {
        server.route(
            INDEX,
            Response::ok(
                json!({"skills": [skill_md_entry(name, &format!("/{name}/SKILL.md"))]}).to_string(),
            ),
        );
        server.protected(
            &format!("/{name}/SKILL.md"),
            "token-for-a",
            Response::ok(skill_md(name, "An indexed skill. Use when testing.")),
        );
    }
    let variable_for_a = format!("SKILLBOX_TOKEN_127_0_0_1_{}", port_of(&a));
    let project = Project::new();
    let add = |server: &StaticServer| {
        project
            .skillbox()
            .env(&variable_for_a, "token-for-a")
            // The host without a port: the default port's origin, neither A nor B.
            .env("SKILLBOX_TOKEN_127_0_0_1", "token-for-port-80")
            .args(["add", &server.base_url()])
            .output()
            .unwrap()
    };

    let output = add(&a);
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(project.installed("alpha").join("SKILL.md").is_file());
    let sent = |path: &str| -> Vec<Option<String>> {
        a.requests()
            .iter()
            .filter(|request| request.path == path)
            .map(|request| request.authorization().map(str::to_owned))
            .collect()
    };
    assert!(
        !sent(INDEX).is_empty() && sent(INDEX).iter().all(Option::is_none),
        "a token went where nobody asked: {:?}",
        sent(INDEX)
    );
    assert_eq!(
        sent("/alpha/SKILL.md"),
        vec![None, Some("Bearer token-for-a".to_owned())],
        "the token went before the challenge, or not after it"
    );

    let output = add(&b);
    let stderr = stderr_of(&output);
    assert!(!output.status.success(), "{stderr}");
    let variable_for_b = format!("SKILLBOX_TOKEN_127_0_0_1_{}", port_of(&b));
    assert!(
        stderr.contains("401") && stderr.contains(&variable_for_b),
        "{stderr}"
    );
    assert!(!stderr.contains("token-for"), "{stderr}");
    assert!(
        b.requests()
            .iter()
            .all(|request| request.authorization().is_none()),
        "a token went to another port: {:?}",
        b.requests()
    );
}

/// A TCP server on loopback that accepts every connection and then says nothing: its port.
fn silent_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    port
}

#[test]
fn a_git_or_ssh_server_that_accepts_and_says_nothing_ends_the_command_within_the_limit() {
    let port = silent_server();
    let project = Project::new();
    for url in [
        format!("git://127.0.0.1:{port}/acme/skills.git"),
        format!("ssh://127.0.0.1:{port}/acme/skills.git"),
    ] {
        let started = Instant::now();
        let output = project
            .skillbox()
            .timeout(Duration::from_secs(90))
            .args(["add", &url, "--network-timeout", "2"])
            .output()
            .unwrap();
        let stderr = stderr_of(&output);
        assert!(!output.status.success(), "{url}: {stderr}");
        assert!(
            stderr.contains("the server sent nothing for 2 s")
                && stderr.contains("--network-timeout"),
            "{url}: {stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{url}: took {:?}",
            started.elapsed()
        );
        project.assert_untouched();
    }
}

/// A `git://` server that answers any request with a list of refs that goes on until it has
/// sent `most` bytes (or the client hangs up): its port, and the bytes it sent so far.
fn endless_refs_server(most: u64) -> (u16, Arc<AtomicU64>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sent = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                // The request line, then the advertisement (protocol 0), never a flush.
                let mut request = [0u8; 4096];
                if !matches!(stream.read(&mut request), Ok(read) if read > 0) {
                    return;
                }
                let oid = "1".repeat(40);
                let packet = |payload: String| format!("{:04x}{payload}", payload.len() + 4);
                let mut lines = packet(format!("{oid} HEAD\0multi_ack side-band-64k ofs-delta\n"));
                let mut branch: u64 = 0;
                loop {
                    while lines.len() < 64 * 1024 {
                        lines.push_str(&packet(format!("{oid} refs/heads/b{branch:012}\n")));
                        branch += 1;
                    }
                    if stream.write_all(lines.as_bytes()).is_err() {
                        return;
                    }
                    let total = counter.fetch_add(lines.len() as u64, Ordering::Relaxed)
                        + lines.len() as u64;
                    lines.clear();
                    if total >= most {
                        return;
                    }
                }
            });
        }
    });
    (port, sent)
}

#[test]
fn a_git_server_whose_refs_never_end_is_stopped_at_the_limit_while_they_are_read() {
    const LIMIT: u64 = 32 * 1024 * 1024;
    // It would go on to three times the limit; a client that reads it all holds it all.
    let (port, sent) = endless_refs_server(3 * LIMIT);
    let project = Project::new();
    let started = Instant::now();
    let output = project
        .skillbox()
        .timeout(Duration::from_secs(120))
        .args(["add", &format!("git://127.0.0.1:{port}/acme/skills.git")])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("more than {LIMIT} bytes of refs")),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(90));
    // What the server got out is the limit and what the sockets buffer, not all it offered.
    let sent = sent.load(Ordering::Relaxed);
    assert!(
        sent < LIMIT + 16 * 1024 * 1024,
        "the server sent {sent} bytes"
    );
    project.assert_untouched();
}

/// A folder holding `ssh`: a stand-in that runs the server's command here (as `ssh host
/// command` would there), recording its arguments in `arguments.txt` beside it.
fn ssh_stand_in(folder: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = folder.join("ssh");
    fs_err::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nwhile [ $# -gt 1 ]; do case \"$1\" in -o) shift 2 ;; -p*) shift ;; *) break ;; esac; done\nshift\nexec sh -c \"$*\"\n",
            folder.join("arguments.txt").display()
        ),
    )
    .unwrap();
    fs_err::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_ssh_source_is_fetched_through_ssh_as_git_runs_it() {
    let repo = GitRepo::new();
    repo.write(&[(
        "SKILL.md",
        &skill_md("remote", "A remote skill. Use when testing."),
    )]);
    repo.commit("first");
    let bin = tempfile::tempdir().unwrap();
    ssh_stand_in(bin.path());
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let project = Project::new();
    let output = project
        .skillbox()
        .env("PATH", path)
        .args([
            "add",
            &format!("ssh://git@example.invalid:2222{}", repo.path().display()),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(project.installed("remote").join("SKILL.md").is_file());
    let arguments = fs_err::read_to_string(bin.path().join("arguments.txt")).unwrap();
    let arguments: Vec<&str> = arguments.lines().collect();
    assert_eq!(
        arguments,
        vec![
            "-o",
            "SendEnv=GIT_PROTOCOL",
            "-p2222",
            "git@example.invalid",
            "git-upload-pack",
            &format!("'{}'", repo.path().display()),
        ]
    );
}
