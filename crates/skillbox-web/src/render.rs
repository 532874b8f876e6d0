//! Turning skill content into HTML that is safe to show: markdown rendered then sanitised,
//! source files highlighted as classed spans, and everything else described, never run.

use std::borrow::Cow;
use std::sync::OnceLock;

use syntect::highlighting::ThemeSet;
use syntect::html::{ClassStyle, ClassedHTMLGenerator, css_for_theme_with_class_style};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// Largest file the viewer highlights; larger text is shown plain (highlighting is the slow
/// part of a page, and a huge file is read, not studied).
pub const MAX_HIGHLIGHTED_BYTES: usize = 256 * 1024;
/// Most bytes of one file the viewer reads.
pub const MAX_VIEWED_BYTES: u64 = 2 * 1024 * 1024;
/// The class prefix of highlighted spans (the stylesheet at `/assets/highlight.css`).
const HIGHLIGHT_CLASS_STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "hl-" };
/// The theme the highlight stylesheet is made from.
const HIGHLIGHT_THEME: &str = "InspiredGitHub";
/// File name extensions shown as images (served from the raw endpoint into an `<img>`, where
/// even an SVG's scripts never run).
const IMAGE_EXTENSIONS: [&str; 9] = [
    "png", "jpg", "jpeg", "gif", "webp", "avif", "bmp", "ico", "svg",
];

/// Deepest nesting of markdown (blocks and inlines) rendered as HTML. The sanitiser's HTML
/// parser takes time growing with the square of the depth (100,000 nested quotes took a
/// minute), so a body nesting deeper is shown as text.
pub const MAX_MARKDOWN_NESTING: usize = 100;
/// Most tags of raw HTML a body's markdown may carry into the page: each may open an element,
/// so they bound the depth as [`MAX_MARKDOWN_NESTING`] does. Past this the raw HTML is shown
/// as text.
pub const MAX_RAW_HTML_TAGS: usize = 256;

/// Markdown (CommonMark with GFM tables, task lists, strikethrough and footnotes) as sanitised
/// HTML: no scripts, event attributes, styles, forms or `javascript:` links survive. Relative
/// links and images point into the skill's own files through `link_to_file`; links that climb
/// out of the skill are dropped. A body nesting deeper than [`MAX_MARKDOWN_NESTING`] is shown
/// as text, and raw HTML past [`MAX_RAW_HTML_TAGS`] tags is too, so the sanitiser's work stays
/// in proportion to the body's size.
#[must_use]
pub fn markdown_html(markdown: &str, link_to_file: &(dyn Fn(&str) -> String + Sync)) -> String {
    let options = pulldown_cmark::Options::ENABLE_TABLES
        | pulldown_cmark::Options::ENABLE_STRIKETHROUGH
        | pulldown_cmark::Options::ENABLE_TASKLISTS
        | pulldown_cmark::Options::ENABLE_FOOTNOTES;
    let shape = MarkdownShape::of(pulldown_cmark::Parser::new_ext(markdown, options));
    if shape.deepest > MAX_MARKDOWN_NESTING {
        return format!(
            "<p class=\"note\">This body nests more than {MAX_MARKDOWN_NESTING} levels deep, so it is shown as text.</p><pre class=\"body-text\">{}</pre>",
            ammonia::clean_text(markdown)
        );
    }
    let keep_raw_html = shape.raw_html_tags <= MAX_RAW_HTML_TAGS;
    let parser = pulldown_cmark::Parser::new_ext(markdown, options).map(|event| match event {
        pulldown_cmark::Event::Html(html) | pulldown_cmark::Event::InlineHtml(html)
            if !keep_raw_html =>
        {
            pulldown_cmark::Event::Text(html)
        }
        other => other,
    });
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, parser);
    let rewrite = FileLinks { link_to_file };
    let clean = ammonia::Builder::default()
        .url_relative(ammonia::UrlRelative::Custom(Box::new(rewrite)))
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .clean(&html)
        .to_string();
    if keep_raw_html {
        clean
    } else {
        format!(
            "<p class=\"note\">This body holds more than {MAX_RAW_HTML_TAGS} HTML tags, so they are shown as text.</p>{clean}"
        )
    }
}

/// How deep a body's markdown nests and how many tags its raw HTML holds.
struct MarkdownShape {
    deepest: usize,
    raw_html_tags: usize,
}

impl MarkdownShape {
    fn of<'a>(events: impl Iterator<Item = pulldown_cmark::Event<'a>>) -> Self {
        let mut shape = MarkdownShape {
            deepest: 0,
            raw_html_tags: 0,
        };
        let mut depth = 0_usize;
        for event in events {
            match event {
                pulldown_cmark::Event::Start(_) => {
                    depth += 1;
                    shape.deepest = shape.deepest.max(depth);
                }
                pulldown_cmark::Event::End(_) => depth = depth.saturating_sub(1),
                pulldown_cmark::Event::Html(html) | pulldown_cmark::Event::InlineHtml(html) => {
                    // Only `<` before a letter opens an element in an HTML parser.
                    shape.raw_html_tags += html
                        .as_bytes()
                        .windows(2)
                        .filter(|pair| pair[0] == b'<' && pair[1].is_ascii_alphabetic())
                        .count();
                }
                _ => {}
            }
        }
        shape
    }
}

/// Rewrites relative URLs in a skill's markdown to the skill's own files; `#anchors` stay,
/// and root-relative paths and paths that climb out of the skill are dropped (they would name
/// this server's pages, not the skill's).
struct FileLinks<'a> {
    link_to_file: &'a (dyn Fn(&str) -> String + Sync),
}

impl<'a> ammonia::UrlRelativeEvaluate<'a> for FileLinks<'a> {
    fn evaluate<'url>(&self, url: &'url str) -> Option<Cow<'url, str>> {
        if url.starts_with('#') {
            return Some(Cow::Borrowed(url));
        }
        let path = url.split(['#', '?']).next().unwrap_or(url);
        let path = path_inside_skill(path)?;
        Some(Cow::Owned((self.link_to_file)(&path)))
    }
}

/// A relative link as a path inside the skill: percent escapes decoded, `.` and `..` resolved
/// from the skill's folder (where `SKILL.md` is). `None` for a root-relative path, a path that
/// climbs out of the skill, or one that is not UTF-8 once decoded.
fn path_inside_skill(link: &str) -> Option<String> {
    let decoded =
        percent_decoded(link.trim_matches(|character: char| character.is_ascii_whitespace()))?;
    if decoded.starts_with(['/', '\\']) {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in decoded.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `text` with its `%XX` escapes decoded (a `%` not followed by two hex digits stays), or
/// `None` when the result is not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

/// How the viewer shows a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileView {
    /// Text, as highlighted HTML (classed spans, already escaped).
    Highlighted(String),
    /// Text too large to highlight, to be escaped by the template.
    Plain(String),
    /// An image, shown from the raw endpoint.
    Image,
    /// Bytes that are not text: described, never shown.
    Binary {
        /// What the name suggests it is.
        guessed_type: String,
    },
}

/// Whether `path` names an image by its extension.
#[must_use]
pub fn is_image_path(path: &str) -> bool {
    extension(path).is_some_and(|extension| IMAGE_EXTENSIONS.contains(&extension.as_str()))
}

fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())
}

/// How to show a file named `path` holding `bytes`.
#[must_use]
pub fn view_file(path: &str, bytes: Vec<u8>) -> FileView {
    if is_image_path(path) {
        return FileView::Image;
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text,
        _ => {
            return FileView::Binary {
                guessed_type: mime_guess::from_path(path)
                    .first_raw()
                    .unwrap_or("application/octet-stream")
                    .to_owned(),
            };
        }
    };
    if text.len() > MAX_HIGHLIGHTED_BYTES {
        return FileView::Plain(text);
    }
    match highlight(path, &text) {
        Some(html) => FileView::Highlighted(html),
        None => FileView::Plain(text),
    }
}

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// `text` as classed HTML spans for the syntax its name suggests, or `None` for plain text.
fn highlight(path: &str, text: &str) -> Option<String> {
    let syntaxes = syntaxes();
    let name = path.rsplit('/').next().unwrap_or(path);
    let syntax = extension(path)
        .and_then(|extension| syntaxes.find_syntax_by_extension(&extension))
        .or_else(|| syntaxes.find_syntax_by_extension(name))
        .or_else(|| syntaxes.find_syntax_by_first_line(text.lines().next().unwrap_or("")))?;
    let mut generator =
        ClassedHTMLGenerator::new_with_class_style(syntax, syntaxes, HIGHLIGHT_CLASS_STYLE);
    for line in LinesWithEndings::from(text) {
        if generator
            .parse_html_for_line_which_includes_newline(line)
            .is_err()
        {
            return None;
        }
    }
    Some(generator.finalize())
}

/// The stylesheet for highlighted spans, made once from the theme.
#[must_use]
pub fn highlight_css() -> &'static str {
    static CSS: OnceLock<String> = OnceLock::new();
    CSS.get_or_init(|| {
        let themes = ThemeSet::load_defaults();
        themes
            .themes
            .get(HIGHLIGHT_THEME)
            .and_then(|theme| css_for_theme_with_class_style(theme, HIGHLIGHT_CLASS_STYLE).ok())
            .unwrap_or_default()
    })
}

/// Make the syntax set ready off the request path (it takes tens of milliseconds).
pub fn warm_up() {
    let _ = syntaxes();
    let _ = highlight_css();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_file(path: &str) -> String {
        format!("/skills/demo/files/{path}")
    }

    #[test]
    fn markdown_keeps_tables_and_drops_everything_active() {
        let html = markdown_html(
            "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[run](javascript:alert(1)) [ref](references/api.md) [out](https://example.com/)\n",
            &to_file,
        );
        assert!(html.contains("<table>"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("onerror"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(
            html.contains("href=\"/skills/demo/files/references/api.md\""),
            "{html}"
        );
        assert!(html.contains("href=\"https://example.com/\""), "{html}");
    }

    #[test]
    fn links_stay_inside_the_skill() {
        assert_eq!(
            path_inside_skill("references/api.md").as_deref(),
            Some("references/api.md")
        );
        assert_eq!(path_inside_skill("./a/../b.md").as_deref(), Some("b.md"));
        assert_eq!(
            path_inside_skill("my%20file.md").as_deref(),
            Some("my file.md")
        );
        assert_eq!(path_inside_skill("100%.md").as_deref(), Some("100%.md"));
        assert_eq!(path_inside_skill("%+f.md").as_deref(), Some("%+f.md"));
        for outside in [
            "../x",
            "a/../../x",
            "%2e%2e/x",
            "..%2fx",
            "%2Fapi/call",
            "/api/call",
            "\\\\evil.example",
            ".",
            "",
            "%ff",
        ] {
            assert_eq!(path_inside_skill(outside), None, "{outside}");
        }
    }

    #[test]
    fn deep_nesting_and_heaps_of_raw_html_are_shown_as_text() {
        let deep = ">".repeat(MAX_MARKDOWN_NESTING + 1) + " x";
        let html = markdown_html(&deep, &to_file);
        assert!(
            html.contains("shown as text") && !html.contains("<blockquote>"),
            "{html}"
        );
        let shallow = ">".repeat(MAX_MARKDOWN_NESTING / 2) + " x";
        assert!(markdown_html(&shallow, &to_file).contains("<blockquote>"));
        let heap = "<b>x</b>".repeat(MAX_RAW_HTML_TAGS + 1);
        let html = markdown_html(&heap, &to_file);
        assert!(
            html.contains("&lt;b&gt;x") && !html.contains("<b>"),
            "{html}"
        );
        let few = "<b>x</b>".repeat(MAX_RAW_HTML_TAGS);
        assert!(markdown_html(&few, &to_file).contains("<b>x</b>"));
    }

    #[test]
    fn files_are_highlighted_plain_images_or_binary() {
        let FileView::Highlighted(html) = view_file("scripts/run.py", b"print('<b>')\n".to_vec())
        else {
            panic!("python should be highlighted");
        };
        assert!(html.contains("hl-"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert_eq!(view_file("logo.svg", b"<svg/>".to_vec()), FileView::Image);
        assert_eq!(
            view_file("data.bin", vec![0, 159, 146, 150]),
            FileView::Binary {
                guessed_type: "application/octet-stream".into()
            }
        );
        assert!(highlight_css().contains(".hl-"));
    }
}
