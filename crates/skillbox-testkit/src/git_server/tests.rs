//! The git servers driven by a real `git` client: clones over HTTP and the git protocol,
//! tokens, refused pushes, and the git processes ended with their server.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine as _;

use super::http_server::{carries_token, cgi_response};
use super::isolated_git::run_git;
use super::*;

/// A folder to clone into and a home for the cloning git.
struct Client {
    folder: tempfile::TempDir,
}

impl Client {
    fn new() -> Self {
        let folder = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(folder.path().join("home")).unwrap();
        Client { folder }
    }

    fn git(&self) -> Command {
        let mut command = git_command(&self.folder.path().join("home"));
        command.current_dir(self.folder.path()).stdin(Stdio::null());
        command
    }

    /// `git clone [options] url checkout`: whether it worked, and its stderr.
    fn clone(&self, options: &[&str], url: &str) -> (bool, String) {
        let output = self
            .git()
            .arg("clone")
            .args(options)
            .args([url, "checkout"])
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    fn checkout(&self) -> PathBuf {
        self.folder.path().join("checkout")
    }

    fn read(&self, path: &str) -> String {
        fs_err::read_to_string(self.checkout().join(path)).unwrap()
    }

    fn in_checkout(&self, arguments: &[&str]) -> String {
        let mut command = self.git();
        command.current_dir(self.checkout()).args(arguments);
        run_git(command, &format!("git {}", arguments.join(" ")))
    }
}

fn skill_repo() -> GitRepo {
    let repo = GitRepo::new();
    repo.write(&[
        (
            "skills/greet/SKILL.md",
            "---\nname: greet\n---\nSay hello.\n",
        ),
        ("README.md", "# skills\n"),
    ]);
    repo.write_executable("skills/greet/scripts/run.sh", "#!/bin/sh\necho hi\n");
    repo.symlink("skills/greet/link.md", "../../README.md");
    repo
}

#[test]
fn a_repository_records_commits_tags_and_branches() {
    let repo = skill_repo();
    let first = repo.commit("first");
    assert_eq!(first.len(), 40);
    assert!(first.bytes().all(|byte| byte.is_ascii_hexdigit()));
    repo.tag("v1.0.0");
    repo.annotated_tag("v1.0.1", "release");
    repo.branch("dev");
    repo.remove("README.md");
    let second = repo.commit("second");
    assert_ne!(first, second);
    assert_eq!(repo.rev_parse("v1.0.0"), first);
    assert_eq!(repo.rev_parse("v1.0.1"), first);
    assert_eq!(repo.rev_parse("dev"), second);
    assert_eq!(repo.rev_parse("main"), first);
    assert_eq!(
        repo.git(&["ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD"]),
        "100644 skills/greet/SKILL.md\n120000 skills/greet/link.md\n\
         100755 skills/greet/scripts/run.sh"
    );
    repo.checkout("main");
    assert!(repo.path().join("README.md").is_file());
}

#[test]
fn git_clones_over_http_fetches_a_commit_and_a_partial_clone() {
    let repo = skill_repo();
    let first = repo.commit("first");
    repo.tag("v1");
    repo.write(&[("skills/greet/SKILL.md", "---\nname: greet\n---\nHello!\n")]);
    let second = repo.commit("second");
    let server = GitHttpServer::start();
    server.add_repo("acme/skills", &repo);
    let url = server.url("acme/skills");
    assert_eq!(url, format!("{}/acme/skills.git", server.base_url()));

    let client = Client::new();
    let (cloned, stderr) = client.clone(&["--filter=blob:none"], &url);
    assert!(cloned, "{stderr}");
    assert_eq!(
        client.read("skills/greet/SKILL.md"),
        "---\nname: greet\n---\nHello!\n"
    );
    assert_eq!(client.in_checkout(&["rev-parse", "HEAD"]), second);
    assert_eq!(client.in_checkout(&["rev-parse", "v1^{commit}"]), first);

    // A commit no ref points at any more is still fetched by its id.
    repo.git(&["reset", "--quiet", "--hard", &first]);
    let empty = Client::new();
    empty
        .git()
        .args(["init", "--quiet", "checkout"])
        .output()
        .unwrap();
    empty.in_checkout(&["fetch", "--quiet", "--depth=1", &url, &second]);
    assert_eq!(empty.in_checkout(&["rev-parse", "FETCH_HEAD"]), second);

    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|request| request.path == "/acme/skills.git/info/refs"
                && request.query.as_deref() == Some("service=git-upload-pack")
                && request.header("git-protocol") == Some("version=2")
                && request.status == 200),
        "{requests:#?}"
    );
    assert!(
        requests
            .iter()
            .any(|request| request.method == "POST" && request.status == 200),
        "{requests:#?}"
    );
    assert!(
        requests
            .iter()
            .all(|request| request.authorization().is_none())
    );
}

#[test]
fn the_git_protocol_header_selects_protocol_v2() {
    let repo = skill_repo();
    repo.commit("first");
    let server = GitHttpServer::start();
    server.add_repo("acme/skills", &repo);
    let advertisement = |protocol: Option<&str>| {
        crate::runtime().block_on(async {
            let mut request = crate::http_client().get(format!(
                "{}/info/refs?service=git-upload-pack",
                server.url("acme/skills")
            ));
            if let Some(protocol) = protocol {
                request = request.header("Git-Protocol", protocol);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200);
            assert_eq!(
                response.headers()["content-type"],
                "application/x-git-upload-pack-advertisement"
            );
            response.text().await.unwrap()
        })
    };
    assert!(advertisement(Some("version=2")).contains("version 2\n"));
    let version_0 = advertisement(None);
    assert!(!version_0.contains("version 2\n"));
    assert!(version_0.contains("refs/heads/main"), "{version_0}");
}

#[test]
fn a_url_without_git_and_a_missing_repository() {
    let repo = skill_repo();
    repo.commit("first");
    let server = GitHttpServer::start();
    server.add_repo("acme/skills", &repo);
    let client = Client::new();
    let (cloned, stderr) = client.clone(&[], &format!("{}/acme/skills", server.base_url()));
    assert!(cloned, "{stderr}");
    assert!(client.checkout().join("README.md").is_file());

    let (cloned, stderr) = Client::new().clone(&[], &server.url("acme/missing"));
    assert!(!cloned);
    assert!(stderr.contains("not found"), "{stderr}");
}

#[test]
fn gzip_request_bodies_reach_http_backend() {
    let repo = GitRepo::new();
    // Enough refs that the fetch request passes 1 KiB, which git sends gzipped.
    for number in 0..40 {
        repo.write(&[("count.txt", &number.to_string())]);
        repo.commit(&format!("commit {number}"));
        repo.tag(&format!("release-{number:03}"));
    }
    let server = GitHttpServer::start();
    server.add_repo("acme/many", &repo);
    let client = Client::new();
    let (cloned, stderr) = client.clone(&[], &server.url("acme/many"));
    assert!(cloned, "{stderr}");
    assert_eq!(client.read("count.txt"), "39");
    let requests = server.requests();
    assert!(
        requests.iter().any(|request| request.method == "POST"
            && request.header("content-encoding") == Some("gzip")
            && request.status == 200),
        "{requests:#?}"
    );
}

#[test]
fn a_token_is_required_when_set() {
    let repo = skill_repo();
    repo.commit("first");
    let server = GitHttpServer::start().with_required_token("secret");
    server.add_repo("acme/private", &repo);
    let url = server.url("acme/private");

    let (cloned, stderr) = Client::new().clone(&[], &url);
    assert!(!cloned);
    assert!(
        stderr.contains("Authentication failed") || stderr.contains("could not read Username"),
        "{stderr}"
    );
    let refused = server.requests();
    assert_eq!(refused[0].status, 401);
    assert_eq!(refused[0].authorization(), None);

    let (cloned, stderr) = Client::new().clone(
        &["--config", "http.extraHeader=Authorization: Bearer wrong"],
        &url,
    );
    assert!(!cloned, "{stderr}");

    let bearer = Client::new();
    let (cloned, stderr) = bearer.clone(
        &["--config", "http.extraHeader=Authorization: Bearer secret"],
        &url,
    );
    assert!(cloned, "{stderr}");
    assert!(bearer.checkout().join("README.md").is_file());

    let port = server.base_url().rsplit(':').next().unwrap().to_owned();
    let (cloned, stderr) = Client::new().clone(
        &[],
        &format!("http://x-access-token:secret@127.0.0.1:{port}/acme/private.git"),
    );
    assert!(cloned, "{stderr}");

    let requests = server.requests();
    assert!(
        requests.iter().any(
            |request| request.status == 200 && request.authorization() == Some("Bearer secret")
        )
    );
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("x-access-token:secret")
    );
    assert!(requests.iter().any(
        |request| request.status == 200 && request.authorization() == Some(basic.as_str())
    ));
    assert!(requests.iter().all(|request| request.status == 200
        || (request.status == 401
            && request.authorization() != Some("Bearer secret")
            && request.authorization() != Some(basic.as_str()))));
}

#[test]
fn pushes_over_http_are_refused() {
    let repo = skill_repo();
    repo.commit("first");
    let server = GitHttpServer::start();
    server.add_repo("acme/skills", &repo);
    let client = Client::new();
    let (cloned, stderr) = client.clone(&[], &server.url("acme/skills"));
    assert!(cloned, "{stderr}");
    let output = client
        .git()
        .current_dir(client.checkout())
        .args(["push", "origin", "HEAD:refs/heads/pushed"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(repo.git(&["branch", "--list", "pushed"]).is_empty());
}

#[test]
fn git_clones_from_the_daemon() {
    let repo = skill_repo();
    let commit = repo.commit("first");
    let daemon = GitDaemon::start();
    daemon.add_repo("acme/skills", &repo);
    let url = daemon.url("acme/skills");
    assert!(url.starts_with("git://127.0.0.1:") && url.ends_with("/acme/skills.git"));
    let client = Client::new();
    let (cloned, stderr) = client.clone(&[], &url);
    assert!(cloned, "{stderr}");
    assert_eq!(client.in_checkout(&["rev-parse", "HEAD"]), commit);
    assert_eq!(client.read("skills/greet/link.md"), "# skills\n");

    let (cloned, _) = Client::new().clone(&[], &daemon.url("acme/missing"));
    assert!(!cloned);
}

#[test]
fn dropped_servers_refuse_connections() {
    let server = GitHttpServer::start();
    let daemon = GitDaemon::start();
    let addresses = [server.base_url(), daemon.base_url()].map(|url| {
        url.rsplit_once("//")
            .map(|(_, address)| address.to_owned())
            .unwrap()
    });
    drop(server);
    drop(daemon);
    for address in addresses {
        assert!(
            crate::wait_until(Duration::from_secs(5), Duration::from_millis(20), || {
                std::net::TcpStream::connect(&address).is_err()
            }),
            "{address} still accepts connections"
        );
    }
}

#[test]
fn dropping_the_daemon_ends_its_git_processes() {
    let daemon = GitDaemon::start();
    let address = daemon.base_url().replace("git://", "");
    // A client that connects and says nothing keeps its `git daemon --inetd` waiting.
    let _idle = std::net::TcpStream::connect(address).unwrap();
    let running = || daemon.processes.running();
    assert!(crate::wait_until(
        Duration::from_secs(10),
        Duration::from_millis(20),
        || !running().is_empty()
    ));
    let pid = running()[0];
    drop(daemon);
    // Gone, and reaped (no zombie left).
    assert!(
        crate::wait_until(Duration::from_secs(10), Duration::from_millis(20), || {
            !Path::new(&format!("/proc/{pid}")).exists()
        }),
        "git daemon {pid} outlived the dropped daemon: {:?}",
        fs_err::read_to_string(format!("/proc/{pid}/stat"))
    );
}

#[test]
fn cgi_headers_and_status_are_read() {
    let response =
        cgi_response(b"Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope").unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.headers()["content-type"], "text/plain");
    let response = cgi_response(b"Content-Type: text/plain\n\nbody\r\n\r\n").unwrap();
    assert_eq!(response.status(), 200);
    assert!(cgi_response(b"no end of headers").is_none());
}

#[test]
fn tokens_are_found_in_bearer_and_basic_credentials() {
    let mut headers = http::HeaderMap::new();
    assert!(!carries_token(&headers, "secret"));
    for (value, carries) in [
        ("Bearer secret", true),
        ("bearer secret", true),
        ("Bearer other", false),
        ("Basic eDpzZWNyZXQ=", true),  // x:secret
        ("Basic c2VjcmV0Ong=", false), // secret:x
        ("Token secret", false),
    ] {
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static(value),
        );
        assert_eq!(carries_token(&headers, "secret"), carries, "{value}");
    }
}
