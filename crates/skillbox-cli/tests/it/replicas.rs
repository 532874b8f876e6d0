//! Stateless replicas: two real `skillbox serve` processes on different ports, the same skill
//! roots and one bucket on a real S3-compatible server (moto on 127.0.0.1, see
//! `skillbox_testkit::s3_server`). What one replica stores, the other reads; a `list_skills`
//! cursor from one continues on the other; a replica killed with `kill -9` in the middle of an
//! upload loses nothing acknowledged and leaves nothing half-written visible.

use std::time::Duration;

use serde_json::{Value, json};
use skillbox_testkit::s3_server::S3Server;

use super::serve::start_server_env;
use super::serve_runs::Server;
use super::support::{make_world_readable, skill_md, write_tree};

/// The key prefix in the bucket, as an operator would give it.
const PREFIX: &str = "skillbox/blobs";
/// Skills in the shared root: enough for several pages.
const SKILLS: usize = 23;

/// Skill roots and a bucket shared by the replicas, and a data folder per replica.
struct Cluster {
    skills: tempfile::TempDir,
    bucket: String,
    data: Vec<tempfile::TempDir>,
}

impl Cluster {
    fn new() -> Self {
        let skills = tempfile::tempdir().unwrap();
        let files: Vec<(String, String)> = (0..SKILLS)
            .map(|index| {
                let name = format!("replica-skill-{index:02}");
                let description = format!("Skill number {index} of the replica tests.");
                (format!("{name}/SKILL.md"), skill_md(&name, &description))
            })
            .collect();
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        write_tree(skills.path(), &files);
        make_world_readable(skills.path());
        Cluster {
            skills,
            bucket: S3Server::shared().create_bucket(),
            data: Vec::new(),
        }
    }

    /// Start one more replica, with a data folder of its own.
    fn replica(&mut self) -> Server {
        let data = tempfile::tempdir().unwrap();
        let environment = S3Server::shared().environment();
        let environment: Vec<(&str, &str)> = environment
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let store = format!("s3://{}/{PREFIX}", self.bucket);
        let server = Server::new(start_server_env(
            data.path(),
            &[self.skills.path().to_path_buf()],
            &["--blob-store", &store],
            &environment,
        ));
        self.data.push(data);
        server
    }
}

fn read(server: &Server, blob_id: &str, mode: &str, max_bytes: Option<u64>) -> Value {
    server.result(
        "read_blob",
        json!({"blob_id": blob_id, "mode": mode, "max_bytes": max_bytes}),
    )
}

#[test]
fn a_blob_created_through_one_replica_is_read_through_the_other() {
    let mut cluster = Cluster::new();
    let (a, b) = (cluster.replica(), cluster.replica());
    let created = a.result(
        "create_blob",
        json!({"content": "first line\nmiddle\nlast line", "kind": "text/plain"}),
    );
    let blob_id = created["blob_id"].as_str().unwrap();
    assert_eq!(
        read(&b, blob_id, "sample_head", Some(10))["preview"],
        "first line"
    );
    let tail = read(&b, blob_id, "sample_tail", Some(9));
    assert_eq!(
        (&tail["preview"], &tail["offset"]),
        (&json!("last line"), &json!(18))
    );
    let full = read(&b, blob_id, "full", None);
    assert_eq!(full["preview"], "first line\nmiddle\nlast line");
    assert_eq!(full["truncated"], false);
    // A ranged read of the middle: the first 17 bytes, cut.
    let ranged = read(&b, blob_id, "full", Some(17));
    assert_eq!(
        (&ranged["preview"], &ranged["truncated"]),
        (&json!("first line\nmiddle"), &json!(true))
    );
    // Both replicas keep nothing of the blob on their own disks.
    for data in &cluster.data {
        assert!(
            !data.path().join("blobs").exists(),
            "blobs were kept locally"
        );
    }
}

#[test]
fn a_run_on_one_replica_has_output_blobs_the_other_reads_and_runs_on() {
    let mut cluster = Cluster::new();
    let (a, b) = (cluster.replica(), cluster.replica());
    // Larger than one upload part (8 MiB), so it goes up in several.
    let code = r#"
def main(args):
    with open("/workspace/out/report.txt", "w") as report:
        report.write("total: 42\n")
    with open("/workspace/out/big.txt", "w") as big:
        big.write("x" * (12 * 1024 * 1024 - 3) + "end")
    return {"ok": True}
"#;
    let run = a.result("run_code", json!({"language": "python", "code": code}));
    assert_eq!(run["status"], "completed", "{run}");
    let outputs: Vec<&str> = run["output_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["blob_id"].as_str().unwrap())
        .collect();
    assert_eq!(outputs.len(), 2, "{run}");
    let (big, report) = (outputs[0], outputs[1]);
    assert_eq!(read(&b, report, "full", None)["preview"], "total: 42\n");
    let tail = read(&b, big, "sample_tail", Some(5));
    assert_eq!(
        (&tail["preview"], &tail["size_bytes"]),
        (&json!("xxend"), &json!(12 * 1024 * 1024))
    );
    // A run on the other replica reads them as input blobs, copied from the bucket.
    let reader = r#"
import runtime
def main(args):
    text = runtime.blobs.read_text(args["big"])
    return {"size": len(text), "end": text[-3:], "report": runtime.blobs.read_text(args["report"])}
"#;
    let run = b.result(
        "run_code",
        json!({"language": "python", "code": reader, "args": {"big": big, "report": report},
               "input_blobs": [big, report]}),
    );
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(
        run["output"],
        json!({"size": 12 * 1024 * 1024, "end": "end", "report": "total: 42\n"})
    );
}

#[test]
fn a_list_skills_cursor_from_one_replica_continues_on_the_other() {
    let mut cluster = Cluster::new();
    let replicas = [cluster.replica(), cluster.replica()];
    let everything = replicas[0].result("list_skills", json!({"limit": 1000}));
    let expected: Vec<&str> = everything["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    assert!(expected.len() >= SKILLS, "{everything}");
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for page in 0.. {
        // Each page from the other replica than the one before.
        let server = &replicas[page % 2];
        let answer = server.result("list_skills", json!({"limit": 5, "cursor": cursor}));
        for skill in answer["skills"].as_array().unwrap() {
            names.push(skill["name"].as_str().unwrap().to_owned());
        }
        cursor = answer["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
        assert!(page < 100, "the cursor never ends");
    }
    assert_eq!(names, expected, "pages across replicas gap or repeat");
}

#[test]
fn a_replica_killed_mid_upload_loses_nothing_acknowledged_and_shows_nothing_partial() {
    let server = S3Server::shared();
    let mut cluster = Cluster::new();
    let (mut a, b) = (cluster.replica(), cluster.replica());
    let acknowledged = a.result(
        "create_blob",
        json!({"content": "acknowledged before the crash", "kind": "text/plain"}),
    );
    let acknowledged = acknowledged["blob_id"].as_str().unwrap().to_owned();
    // A run whose output (96 MiB) goes up in a dozen parts; A is killed while they go.
    let code = r#"
def main(args):
    chunk = b"y" * (1024 * 1024)
    with open("/workspace/out/huge.bin", "wb") as huge:
        for _ in range(96):
            huge.write(chunk)
    return {"ok": True}
"#;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "run_code",
                         "params": {"language": "python", "code": code, "timeout_ms": 60000}});
    let url = a.url.clone();
    let client = a.client.clone();
    let pending = a.runtime.spawn(async move {
        let _ = client
            .post(&url)
            .json(&request)
            .timeout(Duration::from_secs(120))
            .send()
            .await;
    });
    let uploading =
        skillbox_testkit::wait_until(Duration::from_secs(60), Duration::from_millis(5), || {
            server.uploads_in_progress(&cluster.bucket) > 0
        });
    assert!(uploading, "the run's output never started uploading");
    // kill -9: no chance to finish, abort or clean up.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    a.runtime.block_on(pending).unwrap();

    // What was acknowledged is whole on the other replica.
    assert_eq!(
        read(&b, &acknowledged, "full", None)["preview"],
        "acknowledged before the crash"
    );
    // Nothing half-written is visible: the upload's parts are not an object, and every
    // commit record in the bucket belongs to a whole blob. The only record is the
    // acknowledged blob's.
    let objects = server.keys(&cluster.bucket, "");
    let records: Vec<_> = objects
        .iter()
        .filter(|object| object.key.starts_with(&format!("{PREFIX}/meta/")))
        .collect();
    let acknowledged_id = acknowledged.strip_prefix("blob:").unwrap();
    assert_eq!(records.len(), 1, "{objects:?}");
    assert_eq!(
        records[0].key,
        format!("{PREFIX}/meta/{acknowledged_id}.json")
    );
    let data: Vec<_> = objects
        .iter()
        .filter(|object| object.key.starts_with(&format!("{PREFIX}/data/")))
        .collect();
    assert_eq!(data.len(), 1, "{objects:?}");
    assert_eq!(data[0].size, "acknowledged before the crash".len() as u64);
    assert!(
        server.uploads_in_progress(&cluster.bucket) > 0,
        "the killed upload's parts stay invisible until the bucket's lifecycle rule aborts them"
    );
}

#[test]
fn a_bad_blob_store_is_refused_at_start_without_showing_credentials() {
    let data = tempfile::tempdir().unwrap();
    let output = super::support::skillbox()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .args(["--blob-store", "s3://AKIAEXAMPLE:wJalrSECRET@bucket/prefix"])
        .output()
        .unwrap();
    super::support::assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--blob-store") && stderr.contains("AWS_SECRET_ACCESS_KEY"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("wJalrSECRET") && !stderr.contains("AKIAEXAMPLE"),
        "{stderr}"
    );
    // A bucket nobody answers for is reported before the server listens.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = super::support::skillbox()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .args(["--blob-store", "s3://bucket/prefix"])
        .env(
            "AWS_ENDPOINT_URL",
            format!("http://127.0.0.1:{closed_port}"),
        )
        .env("AWS_ACCESS_KEY_ID", "key")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .env("AWS_REGION", "us-east-1")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    super::support::assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot use the blob store `s3://bucket/prefix` (--blob-store)")
            && !stderr.contains("serving the Skills Protocol"),
        "{stderr}"
    );
}
