//! A corpus of varied, real-looking skills written for skillbox's tests, in the shapes that
//! matter to discovery, validation, search and prompt rendering: a flat folder of skills with
//! scripts, assets and license files; a nested catalog (`curated/`, `experimental/`,
//! `system/`) with `agents/openai.yaml` sidecars; a skill with a `tools.json` and its handler;
//! a plugin marketplace (`.claude-plugin/`, `plugins/NAME/skills/…`); and every frontmatter
//! form a skill is written in (plain, single- and double-quoted, folded and literal block
//! scalars with their chomping, plain scalars over several lines, comments, `metadata`
//! mappings, `allowed-tools`, `compatibility`, CRLF line ends). One skill's description is
//! over the spec's 1,024 characters: the one a strict validator refuses.
//!
//! Every test that needs a corpus writes its own with [`SkillCorpus::write`] (a few dozen small
//! files in a temporary folder): the suite needs nothing outside the repository.

use std::path::{Path, PathBuf};

/// The groups of the corpus, each a folder under its root.
pub const CORPUS_GROUPS: [&str; 4] = ["studio", "agents", "tool-skills", "plugins"];

/// The one skill of the corpus a strict validator refuses (its description is too long).
pub const INVALID_SKILL: &str = "api-reference";

/// Skills the corpus holds in all; [`SkillCorpus::write`] fails when it wrote another number.
pub const CORPUS_SKILLS: usize = 26;

/// A corpus written into a temporary folder, removed when dropped.
#[derive(Debug)]
pub struct SkillCorpus {
    folder: tempfile::TempDir,
}

impl SkillCorpus {
    /// Write the corpus into a new temporary folder, readable by every user (a sandboxed run
    /// reads skills as another user). Fails the test when a skill went missing.
    #[must_use]
    pub fn write() -> SkillCorpus {
        let folder = tempfile::Builder::new()
            .prefix("skillbox-corpus-")
            .tempdir()
            .expect("a temporary folder");
        let root = folder.path();
        for (path, text) in studio()
            .into_iter()
            .chain(agents())
            .chain(tool_skills())
            .chain(plugins())
        {
            let path = root.join(path);
            fs_err::create_dir_all(path.parent().expect("a file has a parent folder"))
                .expect("the corpus folder can be made");
            fs_err::write(&path, text).expect("the corpus can be written");
        }
        let corpus = SkillCorpus { folder };
        let written = corpus.skill_folders().len();
        assert_eq!(
            written, CORPUS_SKILLS,
            "the corpus holds {written} skills, not {CORPUS_SKILLS}: a test needing it would check less than it says"
        );
        for entry in walk(corpus.root()) {
            use std::os::unix::fs::PermissionsExt;
            let mode = if entry.is_dir() { 0o755 } else { 0o644 };
            fs_err::set_permissions(&entry, std::fs::Permissions::from_mode(mode))
                .expect("the corpus can be opened to every user");
        }
        corpus
    }

    /// The corpus's root: one folder per group.
    #[must_use]
    pub fn root(&self) -> &Path {
        self.folder.path()
    }

    /// The folder of one group (one of [`CORPUS_GROUPS`]), or of a part of it
    /// (`agents/curated`).
    #[must_use]
    pub fn group(&self, relative: &str) -> PathBuf {
        let path = self.root().join(relative);
        assert!(path.is_dir(), "the corpus has no folder `{relative}`");
        path
    }

    /// Every folder of the corpus holding a `SKILL.md`, sorted.
    #[must_use]
    pub fn skill_folders(&self) -> Vec<PathBuf> {
        let mut folders: Vec<PathBuf> = walk(self.root())
            .into_iter()
            .filter(|path| path.is_dir() && path.join("SKILL.md").is_file())
            .collect();
        folders.sort();
        folders
    }
}

/// Every file and folder under `root`, `root` included.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs_err::read_dir(&folder).expect("the corpus can be listed") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            found.push(path);
        }
    }
    found
}

type Files = Vec<(String, String)>;

fn file(path: &str, text: &str) -> (String, String) {
    (path.to_owned(), text.to_owned())
}

/// A flat folder of skills, the way a company publishes its own: scripts, assets, license
/// files, and every way of writing a description.
fn studio() -> Files {
    vec![
        file(
            "studio/slack-gif-maker/SKILL.md",
            "---\nname: slack-gif-maker\ndescription: Make small animated GIFs that stay inside Slack's limits for emoji and messages (size, frame count, dimensions). Use when someone asks for an animated GIF, a reaction GIF or an animated emoji for Slack.\nlicense: Complete terms in LICENSE.txt\n---\n\n# Animated GIFs for Slack\n\nSlack refuses emoji over 128 KB and shows message GIFs best under 2 MB.\n\n1. Draw the frames with `scripts/frames.py`.\n2. Assemble and shrink them with `scripts/assemble.py --target emoji|message`.\n3. Check the result with `scripts/check.py FILE`.\n",
        ),
        file(
            "studio/slack-gif-maker/LICENSE.txt",
            "Licensed for skillbox's tests only.\n",
        ),
        file(
            "studio/slack-gif-maker/scripts/frames.py",
            "import sys\nprint(f'drawing {len(sys.argv) - 1} frames')\n",
        ),
        file(
            "studio/slack-gif-maker/scripts/assemble.py",
            "import sys\nprint('assembled', ' '.join(sys.argv[1:]))\n",
        ),
        file(
            "studio/slack-gif-maker/scripts/check.py",
            "import os, sys\nprint(os.path.getsize(sys.argv[1]))\n",
        ),
        file(
            "studio/web-app-checks/SKILL.md",
            "---\nname: web-app-checks\ndescription: Test a local web application in a real browser with Playwright - open its pages, click through a flow, capture screenshots and the browser console. Use when asked to test, verify or debug a web app's behaviour in a browser.\nlicense: Complete terms in LICENSE.txt\n---\n\n# Checking a web app in a browser\n\nStart the app with `scripts/with_server.py -- npm run dev`, then drive it with a Playwright\nscript. Wait for the network to be idle before reading the page.\n",
        ),
        file(
            "studio/web-app-checks/LICENSE.txt",
            "Licensed for skillbox's tests only.\n",
        ),
        file(
            "studio/web-app-checks/scripts/with_server.py",
            "import subprocess, sys\nsubprocess.run(sys.argv[2:], check=False)\n",
        ),
        file(
            "studio/generative-art/SKILL.md",
            "---\nname: generative-art\ndescription: >\n  Create generative art with p5.js: seeded randomness, flow fields and particle\n  systems, with sliders to explore the parameters. Use when the user asks for\n  algorithmic or generative art.\nlicense: Complete terms in LICENSE.txt\n---\n\nWrite a philosophy of the piece first, then the sketch. Keep the seed in the URL.\n",
        ),
        file(
            "studio/generative-art/templates/viewer.html",
            "<!doctype html><title>viewer</title><script src=\"sketch.js\"></script>\n",
        ),
        file(
            "studio/brand-styling/SKILL.md",
            "---\nname: brand-styling\ndescription: \"Apply the house colours and type to any artifact: slides, documents, web pages. Use when the user mentions \\\"our brand\\\", brand colours or the style guide.\"\nlicense: Complete terms in LICENSE.txt\n---\n\n## Colours\n\n- Ink `#141413`, paper `#faf9f5`, accent `#d97757`.\n",
        ),
        file(
            "studio/ui-design/SKILL.md",
            "---\nname: ui-design\ndescription: 'Design distinctive interfaces with a clear point of view; avoid the generic look. Use when building a new UI or reworking one''s visual design.'\nlicense: Complete terms in LICENSE.txt\n---\n\nPick a direction (editorial, brutalist, playful) and commit to it.\n",
        ),
        file(
            "studio/team-updates/SKILL.md",
            "---\r\nname: team-updates\r\ndescription: \"Write internal updates: weekly status, incident reports, launch notes, newsletters. Use when asked for a status report or an internal announcement.\"\r\nlicense: Complete terms in LICENSE.txt\r\n---\r\n\r\nPick the template in `examples/` that matches the kind of update.\r\n",
        ),
        file(
            "studio/team-updates/examples/weekly.md",
            "# Weekly update\n\n## Done\n\n## Next\n\n## Blocked\n",
        ),
        file(
            "studio/mcp-server-guide/SKILL.md",
            "---\nname: mcp-server-guide\ndescription: >-\n  Guide to building MCP servers that let models reach outside services through\n  well-designed tools, in Python (FastMCP) or TypeScript (the MCP SDK).\n  Use when building an MCP server to integrate an API or service.\nlicense: Complete terms in LICENSE.txt\n---\n\nDesign the tools around the user's tasks, not the API's endpoints.\n",
        ),
        file(
            "studio/skill-author/SKILL.md",
            "---\nname: skill-author\ndescription: Create new skills, improve existing ones and measure how well they trigger. Use when the user wants to write, edit or evaluate a skill.\nmetadata:\n  author: skillbox tests\n  version: \"2.1\"\n---\n\nStart from what the skill is for and when it should trigger.\n",
        ),
        file(
            "studio/theme-kit/SKILL.md",
            "---\nname: theme-kit\ndescription: Style slides, documents and pages with one of ten ready themes, or make a new theme on the fly. Use when the user wants a consistent look across artifacts.\nallowed-tools: Read Write\ncompatibility: Needs a browser to preview themes.\nlicense: Complete terms in LICENSE.txt\n---\n\nShow `themes/showcase.pdf` and let the user pick.\n",
        ),
        file(
            "studio/html-bundle/SKILL.md",
            "---\nname: html-bundle\ndescription: Build elaborate single-file HTML artifacts with React, Tailwind\n  and shadcn/ui components, bundled into one file. Use for artifacts\n  that need state, routing or many components.\nlicense: Complete terms in LICENSE.txt\n---\n\nRun `scripts/init.sh NAME`, develop, then `scripts/bundle.sh`.\n",
        ),
        file(
            "studio/html-bundle/scripts/init.sh",
            "#!/bin/sh\necho \"init $1\"\n",
        ),
        file(
            "studio/data-notebook/SKILL.md",
            "---\nname: data-notebook\ndescription: Explore a table of data in a notebook — load it, clean it, chart it, and explain what it shows (résumés of the findings included). Use when handed a CSV or spreadsheet to analyse.\nlicense: Apache-2.0\n---\n\nLoad with pandas; chart with matplotlib; keep each cell short.\n",
        ),
        file(
            "studio/api-reference/SKILL.md",
            &format!(
                "---\nname: api-reference\ndescription: |-\n{}\nlicense: Complete terms in LICENSE.txt\n---\n\nRead `reference/` for the topic at hand before writing code.\n",
                long_description()
            ),
        ),
        file(
            "studio/api-reference/reference/streaming.md",
            "# Streaming\n\nRead events until `message_stop`.\n",
        ),
    ]
}

/// A description over the spec's 1,024 characters, as a literal block scalar's lines.
fn long_description() -> String {
    let topics = [
        "model identifiers and their context windows",
        "prices per million input and output tokens",
        "request parameters, their defaults and their limits",
        "streaming responses and the events they send",
        "tool use, tool results and parallel calls",
        "prompt caching and the discount it gives",
        "batches, their limits and how results come back",
        "files uploaded once and used in many requests",
        "extended thinking and its token budget",
        "rate limits, retries and the errors to expect",
        "the SDKs for Python, TypeScript, Go and Java",
        "migrating code from one model generation to the next",
    ];
    let mut lines =
        vec!["  Reference for the model API and its SDKs, for code that calls the API.".to_owned()];
    for topic in topics {
        lines.push(format!(
            "  TRIGGER when the code or the question is about {topic}."
        ));
    }
    lines.push(
        "  SKIP when the work is about another provider's API, or has nothing to do with it."
            .to_owned(),
    );
    let text = lines.join("\n");
    assert!(
        text.len() > 1100,
        "the long description is {} bytes",
        text.len()
    );
    text
}

/// A nested catalog (`curated/`, `experimental/`, `system/`), each skill with a short
/// description in `metadata` and an `agents/openai.yaml` sidecar.
fn agents() -> Files {
    let skills = [
        (
            "curated",
            "gh-review-replies",
            "Answer the review comments on the open GitHub pull request of the current branch with the gh CLI. Use when asked to address or reply to PR review comments.",
            "Address review comments on a PR",
        ),
        (
            "curated",
            "ci-fix",
            "Find why a pull request's GitHub Actions checks fail - read the failing logs with gh, summarise the cause and propose a fix. Use when CI is red.",
            "Fix failing CI checks",
        ),
        (
            "curated",
            "notes-capture",
            "Turn a conversation's decisions and facts into a structured page in the team wiki. Use when asked to save or document what was decided.",
            "Capture decisions into the wiki",
        ),
        (
            "curated",
            "meeting-prep",
            "Prepare a meeting - gather the related pages, write an agenda and a pre-read. Use when a meeting is coming up and needs materials.",
            "Prepare meetings with agendas",
        ),
        (
            "curated",
            "research-brief",
            "Research a topic across the team's pages and write a brief with sources. Use when asked for a summary or a report on what is known.",
            "Research and write briefs",
        ),
        (
            "curated",
            "spec-planner",
            "Turn a written spec into an implementation plan with tasks and milestones. Use when a spec needs to become work items.",
            "Plan work from a spec",
        ),
        (
            "experimental",
            "plan-writer",
            "Write a short, concrete plan for a coding task, with steps and open questions. Use when the user explicitly asks for a plan.",
            "Write a plan",
        ),
        (
            "experimental",
            "issue-tracker",
            "Read, create and update issues, projects and cycles in the issue tracker. Use when the user wants to manage tracker issues.",
            "Manage tracker issues",
        ),
        (
            "system",
            "skill-maker",
            "Guide for writing effective skills (structure, triggers, scripts and references). Use when the user wants to create or update a skill.",
            "Create or update a skill",
        ),
        (
            "system",
            "skill-fetcher",
            "Install skills from a curated list or from a repository path into the user's skills folder. Use when asked to install or list installable skills.",
            "Install skills",
        ),
    ];
    let mut files = Vec::new();
    for (group, name, description, short) in skills {
        files.push(file(
            &format!("agents/{group}/{name}/SKILL.md"),
            &format!(
                "---\n# Written for skillbox's tests.\nname: {name}\ndescription: {description}\nmetadata:\n  short-description: {short}\n---\n\n# {short}\n\nFollow the steps in order; stop and ask when a step fails.\n"
            ),
        ));
        files.push(file(
            &format!("agents/{group}/{name}/agents/openai.yaml"),
            &format!("interface:\n  display_name: \"{short}\"\n  short_description: \"{short}\"\n"),
        ));
    }
    files.push(file(
        "agents/curated/ci-fix/scripts/failing_logs.py",
        "import sys\nprint('logs of', sys.argv[1:] or 'the current branch')\n",
    ));
    files
}

/// A skill that brings a tool (`tools.json`) with its handler.
fn tool_skills() -> Files {
    vec![
        file(
            "tool-skills/word-count/SKILL.md",
            "---\nname: word-count\ndescription: Count the words of a text with the count_words tool.\n---\n\nCall `count_words` with the text.\n",
        ),
        file(
            "tool-skills/word-count/tools.json",
            "[{\"name\": \"count_words\", \"description\": \"Count the words of a text.\", \"script\": \"scripts/count_words.py\", \"parameters\": {\"text\": {\"type\": \"string\", \"description\": \"The text.\"}}}]\n",
        ),
        file(
            "tool-skills/word-count/scripts/count_words.py",
            "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({\"words\": len(args[\"text\"].split())}))\n",
        ),
    ]
}

/// A plugin marketplace: a catalog file, and plugins whose skills sit under `skills/`.
fn plugins() -> Files {
    vec![
        file(
            "plugins/.claude-plugin/marketplace.json",
            "{\"name\": \"test-market\", \"owner\": {\"name\": \"skillbox tests\"}, \"plugins\": [{\"name\": \"release-kit\", \"source\": \"./release-kit\"}, {\"name\": \"docs-kit\", \"source\": \"./docs-kit\"}]}\n",
        ),
        file(
            "plugins/release-kit/.claude-plugin/plugin.json",
            "{\"name\": \"release-kit\", \"version\": \"1.0.0\", \"description\": \"Release chores.\"}\n",
        ),
        file(
            "plugins/release-kit/skills/changelog-writer/SKILL.md",
            "---\nname: changelog-writer\ndescription: Write the changelog entry of a release from its merged pull requests. Use when preparing release notes.\n---\n\nGroup the changes as Added, Changed, Fixed.\n",
        ),
        file(
            "plugins/release-kit/skills/version-bump/SKILL.md",
            "---\nname: version-bump\ndescription: 'Bump the version: major, minor or patch, following semantic versioning. Use when a release needs a new version number.'\n---\n\nRead the changes since the last tag first.\n",
        ),
        file(
            "plugins/docs-kit/.claude-plugin/plugin.json",
            "{\"name\": \"docs-kit\", \"version\": \"0.3.0\", \"description\": \"Documentation chores.\"}\n",
        ),
        file(
            "plugins/docs-kit/skills/readme-refresh/SKILL.md",
            "---\nname: readme-refresh\ndescription: >\n  Bring a README up to date with the code: commands, options, examples.\n  Use when the README no longer matches what the project does.\n---\n\nRun every command the README shows before changing it.\n",
        ),
    ]
}
