//! A hostile skill author against human output and archived runs (issue 15): what a skill
//! wrote reaches a terminal escaped wherever skillbox prints it. Each runs the real binary.

use std::io::Write;

use super::support::{private_runtime_folder, skill_md, skillbox, write_tree};

/// A terminal title change and a screen clear, as a skill author might hide them in text.
const ESCAPES: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J";

/// Panic when output holds a raw escape or bell character.
fn assert_no_raw_escapes(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{what} holds raw escapes: {text:?}"
    );
}

#[test]
fn a_run_that_cannot_unpack_an_entry_names_it_escaped() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("esc.skill");
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    writer.start_file("esc/SKILL.md", options).unwrap();
    writer
        .write_all(skill_md("esc", "Holds an entry that fails its checksum.").as_bytes())
        .unwrap();
    writer.start_file("esc/scripts/go.py", options).unwrap();
    writer.write_all(b"print('hi')\n").unwrap();
    writer
        .start_file(format!("esc/data{ESCAPES}.bin"), options)
        .unwrap();
    writer.write_all(&[b'A'; 64]).unwrap();
    writer.finish().unwrap();
    // Change one byte of the stored entry: its checksum fails when the run unpacks it.
    let mut bytes = fs_err::read(&path).unwrap();
    let at = bytes
        .windows(64)
        .position(|window| window == [b'A'; 64])
        .unwrap();
    bytes[at] = b'B';
    fs_err::write(&path, bytes).unwrap();
    let output = skillbox()
        .env("SKILLBOX_RUNTIME_DIR", private_runtime_folder(temp.path()))
        .arg("--root")
        .arg(&path)
        .args(["run", "esc", "go.py"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("data\\u{1b}]0;pwned\\u{7}\\u{1b}[2J.bin"),
        "{stderr}"
    );
    assert_no_raw_escapes("`run` stderr", &output.stderr);
}

#[test]
fn show_suggests_a_hostile_near_name_escaped() {
    let temp = tempfile::tempdir().unwrap();
    write_tree(
        temp.path(),
        &[(
            "pdf-tools/SKILL.md",
            "---\nname: \"pdf-tools\\e[2J\"\ndescription: A name one screen clear away.\n---\nb\n",
        )],
    );
    let output = skillbox()
        .arg("--root")
        .arg(temp.path())
        .args(["show", "pdf-tools"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("did you mean `pdf-tools\\u{1b}[2J`"),
        "{stderr}"
    );
    assert_no_raw_escapes("`show` stderr", &output.stderr);
}

#[test]
fn call_prints_a_hostile_body_escaped() {
    let temp = tempfile::tempdir().unwrap();
    let body = format!(
        "---\nname: body\ndescription: Hides escapes in its body.\n---\nStep one.{ESCAPES}\n\tindented\n"
    );
    write_tree(temp.path(), &[("body/SKILL.md", &body)]);
    let output = skillbox()
        .env("SKILLBOX_RUNTIME_DIR", private_runtime_folder(temp.path()))
        .arg("--root")
        .arg(temp.path().join("body"))
        .args(["call", "load_skill", "--args", r#"{"name": "body"}"#])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Step one.\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\n\tindented"),
        "{stdout}"
    );
    assert_no_raw_escapes("`call` stdout", &output.stdout);
}

#[test]
fn list_escapes_the_arabic_letter_mark_line_separators_and_invisible_tags() {
    let temp = tempfile::tempdir().unwrap();
    // U+061C is a bidi mark like U+200F; U+2028 and U+2029 end a line in some viewers; U+E0041
    // is an invisible tag character (hidden text).
    let hostile = ["\u{61c}", "\u{2028}", "\u{2029}", "\u{e0041}"];
    let folder = format!("mark{}", hostile.concat());
    let body = format!(
        "---\nname: \"{folder}\"\ndescription: \"hidden{}\"\n---\nb\n",
        hostile.concat()
    );
    write_tree(temp.path(), &[(&format!("{folder}/SKILL.md"), &body)]);
    for command in ["list", "validate"] {
        let output = skillbox()
            .arg("--root")
            .arg(temp.path())
            .arg(command)
            .output()
            .unwrap();
        for text in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(text);
            for character in hostile {
                assert!(!text.contains(character), "`{command}`: {text:?}");
            }
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("mark\\u{61c}"), "`{command}`: {stdout}");
    }
}
