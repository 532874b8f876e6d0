//! The review of the round 4 fixes (issue 34), attacked again through the real binary: a
//! cloned repository leading git out of the project through a committed link, and a hostile
//! model hiding text from the approval prompt with characters a terminal does not draw.
//! Every test here failed before its finding was fixed.

use serde_json::json;
use skillbox_testkit::GitRepo;
use skillbox_testkit::browser::Browser;
use skillbox_testkit::model_server::ScriptedModelServer;

use super::agent::{calls, says};
use super::attacks_round4_tools::on_a_terminal;
use super::install_project::Project;
use super::support::{make_world_readable, skill_md, write_tree};
use super::web::WebServer;

/// A `file://` URL is read by git as it is written: `link/..` is the folder above where the
/// link points, not the project folder the spelling suggests. A cloned manifest or lock
/// naming `file://PROJECT/link/../REPO`, with `link` a committed link to a folder beside the
/// user's repository and a decoy repository at `PROJECT/REPO`, must not get that repository
/// fetched, whatever command reads it.
#[test]
fn a_file_url_cannot_leave_the_project_through_a_link_followed_by_dot_dot() {
    let project = Project::new();
    let users = GitRepo::new();
    users.write(&[(
        "secret-tool/SKILL.md",
        &skill_md("secret-tool", "The user's private tool. Use at work."),
    )]);
    users.commit("private work");
    let users_folder = fs_err::canonicalize(users.path()).unwrap();
    let repository_name = users_folder.file_name().unwrap().to_str().unwrap();
    // The decoy the spelling names, inside the project: a repository of its own.
    let decoy = project.directory().join(repository_name);
    fs_err::create_dir_all(decoy.join("objects")).unwrap();
    fs_err::create_dir_all(decoy.join("refs")).unwrap();
    fs_err::write(decoy.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    // `link/..` is the folder holding the user's repository.
    std::os::unix::fs::symlink(&users_folder, project.directory().join("link")).unwrap();
    let url = format!(
        "file://{}/link/../{repository_name}",
        project.directory().display()
    );

    fs_err::write(
        project.directory().join("skillbox.toml"),
        format!("[skills]\nsecret-tool = {{ source = {url:?}, path = \"secret-tool\" }}\n"),
    )
    .unwrap();
    let stderr = project.refused(&["install"]);
    assert!(stderr.contains("outside the project"), "{stderr}");
    assert!(!project.installed("secret-tool").exists());
    assert!(!project.directory().join("skillbox.lock").exists());

    // The same source in a planted lock, for every command that fetches.
    fs_err::remove_file(project.directory().join("skillbox.toml")).unwrap();
    project.write_lock(&json!({
        "version": 1,
        "skills": {
            "secret-tool": {
                "source": url,
                "kind": "git",
                "path": "secret-tool",
                "revision": "0".repeat(40),
                "digest": format!("sha256:{}", "0".repeat(64)),
                "files": {}
            }
        }
    }));
    for command in [&["install"][..], &["update"], &["outdated"]] {
        let stderr = project.refused(command);
        assert!(
            stderr.contains("outside the project"),
            "{command:?}: {stderr}"
        );
        assert!(!stderr.contains("digests to"), "{command:?}: {stderr}");
        assert!(!project.installed("secret-tool").exists(), "{command:?}");
    }
}

/// Characters a terminal draws as nothing (variation selectors, one per byte of a smuggled
/// text; the soft hyphen; the Hangul filler; the invisible operators) in a call's arguments
/// would let a hostile model send what the person approving never saw: the prompt shows
/// each of them as an escape.
#[test]
fn an_approval_prompt_shows_characters_a_terminal_draws_as_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("root");
    write_tree(
        &root,
        &[
            (
                "weather/SKILL.md",
                "---\nname: weather\ndescription: Weather lookups. Use for the weather.\n---\nCall get_weather.\n",
            ),
            (
                "weather/tools.json",
                r#"[{"name":"get_weather","description":"Current weather of a city.","script":"scripts/weather.py","parameters":{"city":{"type":"string","description":"The city"}}}]"#,
            ),
            (
                "weather/scripts/weather.py",
                "import json, sys\nprint(json.dumps({'got': json.load(sys.stdin).get('city')}))\n",
            ),
        ],
    );
    make_world_readable(&root);
    // `API_KEY=sk-1`, one variation selector per byte, after the city.
    let smuggled: String = "API_KEY=sk-1"
        .bytes()
        .map(|byte| char::from_u32(0xE0100 + u32::from(byte) - 16).unwrap())
        .collect();
    let city = format!("Paris{smuggled}\u{fe0f}\u{ad}\u{3164}\u{2064}\u{206a}");
    let model = ScriptedModelServer::start(vec![
        calls("get_weather", &json!({ "city": city }).to_string()),
        says("Done."),
    ]);
    let terminal = on_a_terminal(
        &root,
        &[
            "ask",
            "--json",
            "--no-transcript",
            "--approve",
            "ask",
            "--base-url",
            &model.base_url,
            "Weather in Paris?",
        ],
        &["n"],
    );
    let asked = terminal.screens[0].lines().last().unwrap().to_owned();
    assert!(asked.contains("call `get_weather`"), "{asked}");
    let invisible: Vec<String> = asked
        .chars()
        .filter(|&c| {
            matches!(
                c,
                '\u{ad}' | '\u{3164}' | '\u{2064}' | '\u{206a}' | '\u{fe00}'..='\u{fe0f}'
            ) || ('\u{e0100}'..='\u{e01ef}').contains(&c)
        })
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect();
    assert_eq!(invisible, Vec::<String>::new(), "{asked}");
    let shown: String = "API_KEY=sk-1"
        .bytes()
        .map(|byte| format!("\\u{{{:x}}}", 0xE0100 + u32::from(byte) - 16))
        .collect();
    assert!(
        asked.contains(&format!(
            "Paris{shown}\\u{{fe0f}}\\u{{ad}}\\u{{3164}}\\u{{2064}}\\u{{206a}}"
        )),
        "{asked}"
    );
}

/// The web app's approval card (`serve --approve ask`) shows the same characters as escapes:
/// a page draws them as nothing too.
#[test]
fn an_approval_card_shows_characters_a_page_draws_as_nothing() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let smuggled: String = "API_KEY=sk-1"
        .bytes()
        .map(|byte| char::from_u32(0xE0100 + u32::from(byte) - 16).unwrap())
        .collect();
    let city = format!("Oslo{smuggled}\u{ad}\u{202e}");
    let model = ScriptedModelServer::start(vec![
        calls("get_weather", &json!({ "city": city }).to_string()),
        says("Done."),
    ]);
    let server = WebServer::over_web_tree(
        &[
            "--base-url",
            &model.base_url,
            "--model",
            "scripted",
            "--approve",
            "ask",
        ],
        &[],
    );
    let page = browser.new_page();
    page.goto(&format!("{}/chat", server.base));
    page.find("#chat-input")
        .type_text("What is the weather in Oslo?\n");
    let card = page.wait_for(".approval .approval-arguments");
    let shown = card.text();
    assert!(
        !shown
            .chars()
            .any(|c| ('\u{e0100}'..='\u{e01ef}').contains(&c) || c == '\u{ad}' || c == '\u{202e}'),
        "{shown:?}"
    );
    let escaped: String = "API_KEY=sk-1"
        .bytes()
        .map(|byte| format!("\\u{{{:x}}}", 0xE0100 + u32::from(byte) - 16))
        .collect();
    assert!(
        shown.contains(&format!("Oslo{escaped}\\u{{ad}}\\u{{202e}}")),
        "{shown:?}"
    );
}
