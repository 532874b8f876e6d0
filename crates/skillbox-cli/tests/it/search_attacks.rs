//! Attacks on search through the real binary: a hostile catalog trying to capture queries
//! (words that share a query word's hash, words stuffed into every field) and skills hidden
//! from models, through `skillbox find` and `find_skills` on `/rpc` of a real server.

use serde_json::{Value, json};

use super::serve::start_server_with;
use super::serve_runs::Server;
use super::support::{json_stdout, skill_md, skillbox};

/// Two words whose 32-bit `fxhash` (the term hash of the `bm25` crate) is equal, both kept as
/// they are by its tokenizer: found by the birthday search of the core crate's search tests.
const PLANTED: &str = "zquyaaaak";
const ASKED: &str = "zquabaaak";

/// A skills folder with the given `(folder, SKILL.md)` pairs.
fn skills(files: &[(&str, String)]) -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    for (folder, text) in files {
        std::fs::create_dir_all(temp.path().join(folder)).unwrap();
        std::fs::write(temp.path().join(folder).join("SKILL.md"), text).unwrap();
    }
    temp
}

/// The names `skillbox find --json` prints.
fn found_names(found: &Value) -> Vec<&str> {
    found["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect()
}

#[test]
fn find_does_not_match_a_word_that_only_shares_the_querys_hash() {
    let root = skills(&[
        (
            "capture-all",
            skill_md("capture-all", &format!("Handles {PLANTED} requests.")),
        ),
        (
            "honest-tool",
            skill_md("honest-tool", &format!("Works on {ASKED} files.")),
        ),
    ]);
    let output = skillbox()
        .arg("--root")
        .arg(root.path())
        .args(["find", "--json", ASKED])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let found = json_stdout(&output);
    assert_eq!(found_names(&found), ["honest-tool"], "{found}");
    assert_eq!(found["matched"], 1);
}

/// The `find_skills` extension of `/rpc`: a skill stuffed with the query word in every field
/// does not outrank one that says it once per field, and skills hidden from models are never
/// returned nor counted, even when they match best.
#[test]
fn rpc_find_skills_resists_stuffing_and_never_shows_hidden_skills() {
    let stuffing = "PDF ".repeat(40);
    let root = skills(&[
        (
            "pdf-convert",
            "---\nname: pdf-convert\ndescription: Converts PDF files to text.\n---\n# PDF\n\nRun the converter on a PDF file.\n".to_owned(),
        ),
        (
            "pdf-pdf-pdf-pdf-pdf-pdf-pdf-pdf",
            format!("---\nname: pdf-pdf-pdf-pdf-pdf-pdf-pdf-pdf\ndescription: Converts PDF files to text. {stuffing}\nargument-hint: \"{stuffing}\"\n---\n# PDF\n\n{stuffing}\n"),
        ),
        (
            "pdf-secret",
            "---\nname: pdf-secret\ndescription: PDF PDF secret PDF deploy.\ndisable-model-invocation: true\n---\nPDF secret.\n".to_owned(),
        ),
        ("csv-report", skill_md("csv-report", "Builds CSV reports.")),
        ("mail-merge", skill_md("mail-merge", "Merges mail templates.")),
    ]);
    let data = tempfile::tempdir().unwrap();
    let server = Server::new(start_server_with(
        data.path(),
        &[root.path().to_path_buf()],
        &[],
    ));
    let stuffed = server.result("find_skills", json!({"query": "pdf", "limit": 50}));
    let hidden = server.result("find_skills", json!({"query": "secret deploy"}));
    assert_eq!(
        found_names(&stuffed),
        ["pdf-convert", "pdf-pdf-pdf-pdf-pdf-pdf-pdf-pdf"],
        "{stuffed}"
    );
    assert_eq!(found_names(&hidden), Vec::<&str>::new(), "{hidden}");
    assert_eq!(hidden["matched"], 0, "{hidden}");
}
