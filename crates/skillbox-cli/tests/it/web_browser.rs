//! The web app in headless Chromium against the real server: every page loads without console
//! errors (screenshots saved under `target/screenshots/`), search filters the list, the
//! playground calls a tool and checks a form before sending, the chat completes a turn with a
//! tool card, a hostile skill renders inert, and a token is asked for.

use serde_json::json;
use skillbox_testkit::browser::{Browser, Page};
use skillbox_testkit::model_server::{Reply, ScriptedModelServer};

use super::web::WebServer;

/// The console errors of the page, failing the test when there are any.
#[track_caller]
fn assert_clean_console(page: &Page<'_>, what: &str) {
    let errors = page.console_errors();
    assert!(errors.is_empty(), "{what}: console errors: {errors:#?}");
}

#[test]
fn every_page_loads_without_console_errors() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let server = WebServer::over_web_tree(&[], &[]);
    let page = browser.new_page();
    for (path, name, ready) in [
        ("/skills", "skills", "#skill-rows tbody tr"),
        ("/skills/weather", "skill", "#skill-body table"),
        (
            "/skills/weather/files/scripts/weather.py",
            "file",
            "#file-view",
        ),
        ("/playground", "playground", "#tools button"),
        ("/chat", "chat", "#chat-input"),
        ("/runs", "runs", "#run-objects"),
    ] {
        page.goto(&format!("{}{path}", server.base));
        page.wait_for(ready);
        page.screenshot(&format!("web-{name}"));
        assert_clean_console(&page, path);
    }
}

#[test]
fn search_filters_the_list_as_you_type() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let server = WebServer::over_web_tree(&[], &[]);
    let page = browser.new_page();
    page.goto(&format!("{}/skills", server.base));
    page.wait_for("tr[data-skill=\"weather\"]");
    page.find("#skill-search").type_text("city");
    page.wait_for_text("#matched", "1 matching");
    let rows = page.find_all("#skill-rows tbody tr");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].attribute("data-skill").as_deref(), Some("weather"));
    assert!(
        page.current_url().ends_with("/skills?q=city"),
        "{}",
        page.current_url()
    );
    assert_clean_console(&page, "search");
}

#[test]
fn a_skill_page_shows_its_rendered_body_and_files() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let server = WebServer::over_web_tree(&[], &[]);
    let page = browser.new_page();
    page.goto(&format!("{}/skills/weather", server.base));
    assert_eq!(page.wait_for("#skill-body h1").text(), "Weather");
    assert_eq!(page.find("#skill-body td").text(), "C");
    page.wait_for_text("#files", "weather.py");
    page.find("#files a[href$=\"notes.md\"]").click();
    page.wait_for_text("#file-view", "Dry.");
    assert_clean_console(&page, "skill page");
}

#[test]
fn the_playground_calls_a_tool_and_checks_the_form_before_sending() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let server = WebServer::over_web_tree(&[], &[]);
    let page = browser.new_page();
    page.goto(&format!("{}/playground?tool=get_weather", server.base));
    page.wait_for("#field-city");
    assert_eq!(
        page.find("#field-unit").property("tagName").as_deref(),
        Some("SELECT"),
        "an enum is a select"
    );
    // The required city is empty: the form says so and nothing is sent.
    page.find("#call-button").click();
    page.wait_for_text("#form-errors", "city is required");
    assert_eq!(
        page.execute("return document.getElementById('result').hidden", []),
        json!(true)
    );
    page.find("#field-city").type_text("Oslo");
    page.find("#call-button").click();
    page.wait_for_text("#result-content", "sunny");
    page.wait_for_text("#result-meta", "sandbox none");
    page.screenshot("web-playground-result");
    assert_clean_console(&page, "playground");
}

/// A streamed Chat Completions tool call, then an answer.
fn weather_turn() -> Vec<Reply> {
    let call = json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}}]});
    let finish = |reason: &str| {
        json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}],"usage":{"prompt_tokens":10,"completion_tokens":5}}).to_string()
    };
    let text = json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"It is sunny in Oslo."}}]});
    vec![
        Reply::data_events(&[&call.to_string(), &finish("tool_calls")]),
        Reply::data_events(&[&text.to_string(), &finish("stop")]),
    ]
}

#[test]
fn the_chat_completes_a_turn_with_a_tool_card_and_survives_a_reload() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let model = ScriptedModelServer::start(weather_turn());
    let server =
        WebServer::over_web_tree(&["--base-url", &model.base_url, "--model", "scripted"], &[]);
    let page = browser.new_page();
    page.goto(&format!("{}/chat", server.base));
    page.find("#chat-input")
        .type_text("What is the weather in Oslo?\n");
    page.wait_for_text(".bubble.assistant", "It is sunny in Oslo.");
    let card = page.wait_for("details.card");
    assert!(card.text().contains("get_weather"), "{}", card.text());
    page.wait_for_text("#chat-usage", "round 2");
    assert!(
        page.current_url().contains("/chat/"),
        "the conversation has its own address: {}",
        page.current_url()
    );
    page.execute("document.querySelector('details.card').open = true", []);
    page.screenshot("web-chat");
    assert_clean_console(&page, "chat");
    // A reload reads the conversation back from the server.
    let address = page.current_url();
    page.goto(&address);
    page.wait_for_text(".bubble.user", "What is the weather in Oslo?");
    page.wait_for_text(".bubble.assistant", "It is sunny in Oslo.");
    assert_clean_console(&page, "chat after a reload");
}

#[test]
fn a_hostile_skill_renders_inert() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let server = WebServer::over_web_tree(&[], &[]);
    let page = browser.new_page();
    for path in [
        "/skills",
        "/skills/xss",
        "/skills/xss/files/%3Cb%3Ebold%3C%3Ab%3E.md",
        "/skills/xss/raw/%3Cb%3Ebold%3C%3Ab%3E.md",
        "/playground?skill=xss",
    ] {
        page.goto(&format!("{}{path}", server.base));
        page.wait_for("body");
        assert_eq!(
            page.execute("return window.pwned === undefined", []),
            json!(true),
            "{path} ran the skill's script"
        );
    }
    page.goto(&format!("{}/skills/xss", server.base));
    let body = page.body_text();
    assert!(
        body.contains("<script>window.pwned=1</script>"),
        "the description is shown as text: {body}"
    );
}

#[test]
fn with_a_token_the_pages_ask_for_it() {
    let Some(browser) = Browser::shared() else {
        return;
    };
    let server = WebServer::over_web_tree(&["--token", "browser-token"], &[]);
    let page = browser.new_page();
    page.goto(&format!("{}/skills/weather", server.base));
    page.wait_for("#token");
    assert!(
        page.current_url().contains("/login?next="),
        "{}",
        page.current_url()
    );
    page.screenshot("web-login");
    page.find("#token").type_text("wrong\n");
    page.wait_for_text(".message.error", "not the server's token");
    page.find("#token").type_text("browser-token\n");
    page.wait_for("#skill-body");
    assert!(
        page.current_url().ends_with("/skills/weather"),
        "{}",
        page.current_url()
    );
    page.find("#sign-out").click();
    page.wait_for("#token");
}
