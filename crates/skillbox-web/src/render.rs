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

/// Markdown (CommonMark with GFM tables, task lists, strikethrough and footnotes) as sanitised
/// HTML: no scripts, event attributes, styles, forms or `javascript:` links survive. Relative
/// links and images point into the skill's own files through `link_to_file`.
#[must_use]
pub fn markdown_html(markdown: &str, link_to_file: &(dyn Fn(&str) -> String + Sync)) -> String {
    let options = pulldown_cmark::Options::ENABLE_TABLES
        | pulldown_cmark::Options::ENABLE_STRIKETHROUGH
        | pulldown_cmark::Options::ENABLE_TASKLISTS
        | pulldown_cmark::Options::ENABLE_FOOTNOTES;
    let parser = pulldown_cmark::Parser::new_ext(markdown, options);
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, parser);
    let rewrite = FileLinks { link_to_file };
    ammonia::Builder::default()
        .url_relative(ammonia::UrlRelative::Custom(Box::new(rewrite)))
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .clean(&html)
        .to_string()
}

/// Rewrites relative URLs in a skill's markdown to the skill's own files; `#anchors` stay,
/// and root-relative paths are dropped (they would name this server's pages, not the skill's).
struct FileLinks<'a> {
    link_to_file: &'a (dyn Fn(&str) -> String + Sync),
}

impl<'a> ammonia::UrlRelativeEvaluate<'a> for FileLinks<'a> {
    fn evaluate<'url>(&self, url: &'url str) -> Option<Cow<'url, str>> {
        if url.starts_with('#') {
            return Some(Cow::Borrowed(url));
        }
        let path = url.split(['#', '?']).next().unwrap_or(url);
        let path = path.trim_start_matches("./");
        if path.is_empty() || path.starts_with('/') {
            return None;
        }
        Some(Cow::Owned((self.link_to_file)(path)))
    }
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
