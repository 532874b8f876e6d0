//! Replays every seed (and any local `corpus/` or `artifacts/` input of cargo-fuzz) through the
//! fuzz targets' checks, so the targets run on a stable toolchain with plain `cargo test`.

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for folder in ["seeds", "corpus", "artifacts"] {
        let directory = root.join(folder).join(target);
        let Ok(entries) = fs_err::read_dir(&directory) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) -> usize {
    let files = inputs(target);
    for path in &files {
        let data = fs_err::read(path).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{} panicked", path.display());
    }
    files.len()
}

#[test]
fn frontmatter_seeds() {
    let count = replay("frontmatter", skillbox_fuzz::frontmatter);
    assert!(
        count >= 5,
        "expected the frontmatter seeds, found {count} inputs"
    );
}

#[test]
fn manifests_seeds() {
    let count = replay("manifests", skillbox_fuzz::manifests);
    assert!(
        count >= 2,
        "expected the manifest seeds, found {count} inputs"
    );
}

#[test]
fn archives_seeds() {
    let count = replay("archives", skillbox_fuzz::archives);
    assert!(count >= 4, "expected the archive seeds, found {count} inputs");
}
