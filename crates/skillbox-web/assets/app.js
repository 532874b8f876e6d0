// skillbox web app: the little script the server-rendered pages need. Skill content is only
// ever put in the page as text (textContent), never as markup; the server's HTML fragments
// are escaped (or sanitised) where they are made.
"use strict";

const csrf = document.body.dataset.csrf || "";

/** POST JSON with the page's CSRF token; the answer's JSON, or an Error with its message. */
async function postJson(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Skillbox-Csrf": csrf },
    body: JSON.stringify(body ?? {}),
  });
  let answer = null;
  try { answer = await response.json(); } catch (_) { /* not JSON */ }
  if (!response.ok) {
    throw new Error((answer && answer.error) || `the server answered ${response.status}`);
  }
  return answer;
}

/** An element with a class and text. */
function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined && text !== null) made.textContent = String(text);
  return made;
}

function pretty(value) {
  if (typeof value === "string") return value;
  try { return JSON.stringify(value, null, 2); } catch (_) { return String(value); }
}

/**
 * Characters a page draws as nothing or out of order (controls but the newline and tab, bidi
 * marks and overrides, zero-width characters, the soft hyphen, Hangul fillers, variation
 * selectors and tag characters, Unicode's default-ignorable ones): text can hide in them, one
 * byte per character, from a person approving a call. The same set the terminal escapes.
 */
const INVISIBLE_CHARACTERS =
  /[\u{0}-\u{8}\u{b}-\u{1f}\u{7f}-\u{9f}\u{ad}\u{34f}\u{61c}\u{115f}\u{1160}\u{17b4}\u{17b5}\u{180b}-\u{180f}\u{200b}-\u{200f}\u{2028}-\u{202e}\u{2060}-\u{206f}\u{3164}\u{fe00}-\u{fe0f}\u{feff}\u{ffa0}\u{fff0}-\u{fffb}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;

/** `text` with each invisible character written as an escape such as `\u{e0131}`. */
function visible(text) {
  return String(text).replace(INVISIBLE_CHARACTERS, (character) => `\\u{${character.codePointAt(0).toString(16)}}`);
}

function debounce(action, delayMs) {
  let timer = null;
  return (...values) => {
    clearTimeout(timer);
    timer = setTimeout(() => action(...values), delayMs);
  };
}

// ---------------------------------------------------------------- common
const signOut = document.getElementById("sign-out");
if (signOut) {
  signOut.addEventListener("click", async () => {
    try { await postJson("/logout", {}); } finally { location.href = "/login"; }
  });
}

/** Follow the catalog's reloads: `onChange` runs on each one after the first event. */
function followCatalog(onChange) {
  const status = document.getElementById("live-status");
  const events = new EventSource("/api/catalog/events");
  let seen = null;
  events.addEventListener("catalog", (message) => {
    const { generation } = JSON.parse(message.data);
    if (status) status.classList.remove("offline");
    if (seen !== null && generation !== seen) onChange();
    seen = generation;
  });
  events.addEventListener("error", () => { if (status) status.classList.add("offline"); });
}

/** Fetch this page again and put its <main> in place of ours (after a catalog reload). */
async function refreshMain() {
  const response = await fetch(location.href, { headers: { Accept: "text/html" } });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  const main = fresh.querySelector("main");
  if (main) document.querySelector("main").replaceChildren(...main.childNodes);
}

// ---------------------------------------------------------------- skills list and skill page
function skillsPage() {
  const form = document.getElementById("skill-filters");
  if (!form) {
    // A skill or file page: show the skill as it is after each reload.
    followCatalog(refreshMain);
    return;
  }
  const rows = document.getElementById("skill-rows");
  let request = 0;
  const update = async () => {
    const query = new URLSearchParams(new FormData(form));
    for (const [name, value] of [...query.entries()]) if (!value) query.delete(name);
    const shown = query.toString();
    history.replaceState(null, "", shown ? `/skills?${shown}` : "/skills");
    query.set("fragment", "rows");
    const mine = ++request;
    const response = await fetch(`/skills?${query}`);
    if (mine !== request || !response.ok) return;
    // The fragment is the server's own escaped rendering of the rows.
    rows.innerHTML = await response.text();
  };
  form.addEventListener("input", debounce(update, 120));
  form.addEventListener("change", update);
  form.addEventListener("submit", (event) => { event.preventDefault(); update(); });
  followCatalog(update);
}

// ---------------------------------------------------------------- playground
/** The form fields of a JSON Schema object, and how to read and check them. */
function schemaFields(schema) {
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  return Object.entries(properties).map(([name, property]) => fieldFor(name, property || {}, required.has(name)));
}

function typeOf(property) {
  const type = Array.isArray(property.type) ? property.type.find((t) => t !== "null") : property.type;
  if (type) return type;
  if (Array.isArray(property.enum)) return "string";
  if (property.properties) return "object";
  return "any";
}

function fieldFor(name, property, required) {
  const type = typeOf(property);
  // A schema is the skill's: an `enum` that is not a list is no list of choices. (A `pattern`
  // is left to the server's validator: a hostile one run here could hang the tab.)
  const choices = Array.isArray(property.enum) ? property.enum : null;
  const wrapper = element("div", "field");
  const id = `field-${name}`;
  const label = element("label", "", name);
  label.htmlFor = id;
  if (required) label.append(element("span", "required", " *"));
  label.append(element("span", "muted small", `  ${type}${type === "array" && property.items ? ` of ${typeOf(property.items)}` : ""}`));
  wrapper.append(label);
  let input;
  const stringList = type === "array" && property.items && typeOf(property.items) === "string";
  if (choices) {
    input = element("select");
    if (!required) input.append(new Option("", ""));
    for (const choice of choices) input.append(new Option(String(choice), JSON.stringify(choice)));
  } else if (type === "boolean") {
    input = element("select");
    input.append(new Option("", ""), new Option("true", "true"), new Option("false", "false"));
  } else if (type === "integer" || type === "number") {
    input = element("input");
    input.type = "number";
    input.step = type === "integer" ? "1" : "any";
    if (property.minimum !== undefined) input.min = property.minimum;
    if (property.maximum !== undefined) input.max = property.maximum;
  } else if (type === "string") {
    const long = /^(code|content|text|body|prompt|markdown)$/i.test(name) || (property.maxLength || 0) > 200;
    input = element(long ? "textarea" : "input");
    if (!long) input.type = "text";
  } else {
    input = element("textarea");
    input.placeholder = stringList ? "one value per line" : "JSON";
  }
  input.id = id;
  input.name = name;
  if (property.default !== undefined) {
    input.value = input.tagName === "SELECT" ? JSON.stringify(property.default) : (typeof property.default === "string" ? property.default : JSON.stringify(property.default));
  }
  wrapper.append(input);
  if (property.description) wrapper.append(element("div", "help", property.description));
  const problem = element("div", "problem");
  wrapper.append(problem);

  /** The value to send, `undefined` when left empty, or throws a message. */
  const read = () => {
    const raw = input.value;
    if (raw === "") {
      if (required) throw new Error(`${name} is required`);
      return undefined;
    }
    let value;
    if (choices) value = JSON.parse(raw);
    else if (type === "boolean") value = raw === "true";
    else if (type === "integer" || type === "number") {
      value = Number(raw);
      if (!Number.isFinite(value)) throw new Error(`${name} must be a number`);
      if (type === "integer" && !Number.isInteger(value)) throw new Error(`${name} must be a whole number`);
      if (property.minimum !== undefined && value < property.minimum) throw new Error(`${name} must be at least ${property.minimum}`);
      if (property.maximum !== undefined && value > property.maximum) throw new Error(`${name} must be at most ${property.maximum}`);
    } else if (type === "string") {
      value = raw;
      if (property.minLength !== undefined && value.length < property.minLength) throw new Error(`${name} must have at least ${property.minLength} characters`);
      if (property.maxLength !== undefined && value.length > property.maxLength) throw new Error(`${name} must have at most ${property.maxLength} characters`);
    } else if (stringList) {
      value = raw.split("\n").filter((line) => line !== "");
    } else {
      try { value = JSON.parse(raw); } catch (_) { throw new Error(`${name} must be JSON`); }
      if (type === "array" && !Array.isArray(value)) throw new Error(`${name} must be a JSON array`);
      if (type === "object" && (typeof value !== "object" || value === null || Array.isArray(value))) throw new Error(`${name} must be a JSON object`);
    }
    if (choices && !choices.some((choice) => JSON.stringify(choice) === JSON.stringify(value))) {
      throw new Error(`${name} must be one of ${choices.join(", ")}`);
    }
    return value;
  };
  return { name, wrapper, input, problem, read };
}

async function playgroundPage() {
  const root = document.getElementById("playground");
  const list = document.getElementById("tools");
  const search = document.getElementById("tool-search");
  const form = document.getElementById("call-form");
  const fieldsBox = document.getElementById("fields");
  const errors = document.getElementById("form-errors");
  const preview = document.getElementById("arguments-preview");
  const button = document.getElementById("call-button");
  const result = document.getElementById("result");
  let catalog;
  try {
    const response = await fetch("/api/tools");
    catalog = await response.json();
  } catch (error) {
    list.replaceChildren(element("li", "message error", `The tools could not be read: ${error.message}`));
    return;
  }
  let fields = [];
  let current = null;

  // Reads the form; with `mark`, shows each problem beside its field.
  const collect = (mark) => {
    const values = {};
    const problems = [];
    for (const field of fields) {
      if (mark) {
        field.problem.textContent = "";
        field.input.classList.remove("invalid");
      }
      try {
        const value = field.read();
        if (value !== undefined) values[field.name] = value;
      } catch (error) {
        if (mark) {
          field.problem.textContent = error.message;
          field.input.classList.add("invalid");
        }
        problems.push(error.message);
      }
    }
    return { values, problems };
  };

  const choose = (tool) => {
    current = tool;
    for (const entry of list.querySelectorAll("button")) entry.setAttribute("aria-pressed", String(entry.dataset.tool === tool.name));
    document.getElementById("tool-name").textContent = tool.name;
    document.getElementById("tool-description").textContent = tool.description;
    fields = schemaFields(tool.parameters);
    fieldsBox.replaceChildren(...fields.map((field) => field.wrapper));
    if (fields.length === 0) fieldsBox.append(element("p", "muted", "This tool takes no arguments."));
    const skillField = fields.find((field) => field.name === "skill" || (field.name === "name" && tool.group === "protocol"));
    if (skillField && skillField.input.tagName === "INPUT") {
      skillField.input.setAttribute("list", "skill-names");
      if (root.dataset.skill) skillField.input.value = root.dataset.skill;
    }
    errors.hidden = true;
    button.disabled = false;
    preview.textContent = pretty(collect(false).values);
    history.replaceState(null, "", `/playground?tool=${encodeURIComponent(tool.name)}`);
  };

  const show = () => {
    const wanted = search.value.trim().toLowerCase();
    const items = [];
    let group = null;
    for (const tool of catalog.tools) {
      const text = `${tool.name} ${tool.description} ${tool.skill || ""}`.toLowerCase();
      if (wanted && !text.includes(wanted)) continue;
      const label = tool.group === "tools.json" ? `tools.json · ${tool.skill}` : (tool.group === "protocol" ? "Skills Protocol" : "skills");
      if (label !== group) { items.push(element("li", "group", label)); group = label; }
      const item = element("li");
      const entry = element("button", "", tool.name);
      entry.type = "button";
      entry.dataset.tool = tool.name;
      entry.title = tool.description;
      entry.setAttribute("aria-pressed", String(current !== null && current.name === tool.name));
      entry.addEventListener("click", () => choose(tool));
      item.append(entry);
      items.push(item);
    }
    list.replaceChildren(...(items.length ? items : [element("li", "muted", "No tool matches.")]));
  };
  search.addEventListener("input", show);
  show();
  const first = catalog.tools.find((tool) => tool.name === root.dataset.tool)
    || (root.dataset.skill && catalog.tools.find((tool) => tool.skill === root.dataset.skill));
  if (first) choose(first);

  const names = element("datalist");
  names.id = "skill-names";
  for (const name of catalog.skills) names.append(new Option(name));
  root.append(names);
  form.addEventListener("input", () => { preview.textContent = pretty(collect(false).values); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!current) return;
    const { values, problems } = collect(true);
    if (problems.length) {
      errors.textContent = `Not sent: ${problems.join("; ")}.`;
      errors.hidden = false;
      return;
    }
    errors.hidden = true;
    button.disabled = true;
    button.textContent = "Calling…";
    try {
      showResult(await postJson("/api/call", { tool: current.name, arguments: values }));
    } catch (error) {
      errors.textContent = error.message;
      errors.hidden = false;
    } finally {
      button.disabled = false;
      button.textContent = "Call";
    }
  });

  function showResult(answer) {
    result.hidden = false;
    const status = document.getElementById("result-status");
    status.textContent = answer.is_error ? "error" : "ok";
    status.className = `badge ${answer.is_error ? "error" : "ok"}`;
    const content = answer.content;
    const meta = [`${answer.tool}`, `${answer.duration_ms} ms`, `sandbox ${answer.sandbox}`];
    const streams = document.getElementById("result-streams");
    streams.replaceChildren();
    if (content && typeof content === "object" && !Array.isArray(content)) {
      const exit = content.exit_code ?? content.exitCode;
      if (exit !== undefined) meta.push(`exit code ${exit}`);
      for (const stream of ["stdout", "stderr"]) {
        if (typeof content[stream] === "string") {
          streams.append(element("h3", "small", stream), element("pre", stream, content[stream] || "(empty)"));
        }
      }
    }
    document.getElementById("result-meta").textContent = meta.join(" · ");
    document.getElementById("result-content").textContent = pretty(content);
  }
}

// ---------------------------------------------------------------- chat
function chatPage() {
  const root = document.getElementById("chat");
  const messages = document.getElementById("messages");
  const form = document.getElementById("chat-form");
  const input = document.getElementById("chat-input");
  const send = document.getElementById("send-button");
  const stop = document.getElementById("stop-button");
  const model = document.getElementById("chat-model");
  const activeSkill = document.getElementById("active-skill");
  const usage = document.getElementById("chat-usage");
  const suggestions = document.getElementById("command-suggestions");
  const commands = [...document.querySelectorAll("#skill-commands option")].map((option) => ({ value: option.value, hint: option.textContent }));
  let conversation = root.dataset.conversation || "";
  let events = null;
  let answer = null; // the assistant bubble text goes to
  const cards = new Map();

  const setBusy = (busy) => {
    send.hidden = busy;
    stop.hidden = !busy;
  };
  const scroll = () => window.scrollTo(0, document.body.scrollHeight);
  const note = (text, className = "turn-meta") => { messages.append(element("div", className, text)); };

  function render(event, fork) {
    const prefix = fork ? `sub-agent ${fork}: ` : "";
    switch (event.type) {
      case "user":
        messages.append(element("div", "bubble user", event.text));
        answer = null;
        setBusy(true);
        break;
      case "turn_started":
        setBusy(true);
        break;
      case "skill_invoked":
        activeSkill.textContent = event.skill;
        note(`${prefix}invoked /${event.skill} ${event.arguments}`);
        break;
      case "text_delta":
        if (fork) break;
        if (!answer) { answer = element("div", "bubble assistant"); messages.append(answer); }
        answer.textContent += event.text;
        break;
      case "retry":
        note(`${prefix}retrying (attempt ${event.attempt} failed: ${event.reason})`);
        break;
      case "tool_call_started": {
        const card = element("details", "card running");
        const summary = element("summary");
        summary.append(element("strong", "", `${prefix}${event.name}`), " ", element("span", "muted small", argumentsLine(event.arguments)));
        const body = element("div");
        body.append(element("h4", "small", "Arguments"), element("pre", "arguments", pretty(event.arguments)), element("h4", "small", "Result"));
        const result = element("pre", "tool-result", "…");
        body.append(result);
        card.append(summary, body);
        card.dataset.call = event.id;
        messages.append(card);
        cards.set(`${fork || ""}:${event.id}`, { card, result, summary, name: event.name, arguments: event.arguments });
        answer = null;
        break;
      }
      case "tool_call_finished": {
        const entry = cards.get(`${fork || ""}:${event.id}`);
        if (!entry) break;
        entry.card.classList.remove("running");
        if (event.is_error) entry.card.classList.add("failed");
        entry.result.textContent = event.result;
        if (event.duration_ms !== null && event.duration_ms !== undefined) {
          entry.summary.append(" ", element("span", "muted small", `· ${event.duration_ms} ms`));
        }
        if (!fork && entry.name === "load_skill" && !event.is_error && entry.arguments && entry.arguments.skill) {
          activeSkill.textContent = entry.arguments.skill;
        }
        break;
      }
      case "approval_requested": {
        const card = element("div", "approval");
        card.dataset.approval = event.number;
        // Every argument, whole: the card scrolls rather than cut what it asks about.
        card.append(
          element("strong", "", "Approve running code?"),
          element("div", "approval-summary", visible(event.summary)),
          element("pre", "approval-arguments", visible(pretty(event.arguments))),
        );
        const actions = element("div", "actions");
        const approve = element("button", "", "Approve");
        const deny = element("button", "danger", "Deny");
        for (const [button, approved] of [[approve, true], [deny, false]]) {
          button.type = "button";
          button.addEventListener("click", async () => {
            approve.disabled = deny.disabled = true;
            try { await postJson(`/api/chat/${conversation}/approvals/${event.number}`, { approve: approved }); } catch (error) { note(error.message, "bubble error"); }
          });
        }
        actions.append(approve, deny);
        card.append(actions);
        messages.append(card);
        break;
      }
      case "approval_answered": {
        const card = messages.querySelector(`[data-approval="${Number(event.number)}"]`);
        if (card) {
          for (const button of card.querySelectorAll("button")) button.disabled = true;
          card.append(element("div", "muted small", event.approved ? "Approved." : "Denied."));
        }
        break;
      }
      case "approval_denied":
        note(`${prefix}${event.name} was not run: ${event.reason}`);
        break;
      case "model_changed":
        note(`${prefix}model is now ${event.model} (asked by ${event.skill})`);
        break;
      case "usage":
        if (!fork) usage.textContent = `round ${event.round} · ${event.turn.input_tokens ?? 0} in / ${event.turn.output_tokens ?? 0} out tokens`;
        break;
      case "fork":
        render(event.event, event.skill);
        break;
      case "final":
        if (fork) break;
        if (event.end !== "answered") note(`${event.end.replace("_", " ")}: ${event.text}`, "bubble error");
        note(`${event.rounds} round${event.rounds === 1 ? "" : "s"} · ${event.usage.input_tokens ?? 0} in / ${event.usage.output_tokens ?? 0} out tokens`);
        answer = null;
        break;
      case "error":
        note(`${prefix}${event.message}`, "bubble error");
        break;
      case "idle":
        setBusy(false);
        if (event.active_skill) activeSkill.textContent = event.active_skill;
        break;
      case "reset":
        messages.replaceChildren();
        cards.clear();
        answer = null;
        break;
      default:
        break;
    }
  }

  function argumentsLine(value) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return text.length > 120 ? `${text.slice(0, 117)}…` : text;
  }

  function listen() {
    if (events || !conversation) return;
    events = new EventSource(`/api/chat/${conversation}/events`);
    events.addEventListener("message", (message) => {
      render(JSON.parse(message.data), null);
      scroll();
    });
  }

  async function submit() {
    const text = input.value;
    if (!text.trim()) return;
    send.disabled = true;
    try {
      if (!conversation) {
        const made = await postJson("/api/chat", { model: model.value });
        conversation = made.id;
        history.replaceState(null, "", `/chat/${conversation}`);
        listen();
      }
      await postJson(`/api/chat/${conversation}/turns`, { text, model: model.value });
      input.value = "";
      hideSuggestions();
    } catch (error) {
      note(error.message, "bubble error");
    } finally {
      send.disabled = false;
    }
  }

  // `/name` completion from the skills people may invoke.
  let picked = -1;
  function hideSuggestions() { suggestions.hidden = true; picked = -1; }
  function suggest() {
    const text = input.value;
    if (!text.startsWith("/") || /\s/.test(text)) { hideSuggestions(); return; }
    const matches = commands.filter((command) => command.value.startsWith(text)).slice(0, 20);
    if (!matches.length) { hideSuggestions(); return; }
    suggestions.replaceChildren(...matches.map((command, index) => {
      const item = element("li", "", command.value.trim());
      if (command.hint) item.append(" ", element("span", "muted small", command.hint));
      item.setAttribute("aria-selected", String(index === picked));
      item.addEventListener("mousedown", (event) => { event.preventDefault(); input.value = command.value; hideSuggestions(); input.focus(); });
      return item;
    }));
    suggestions.hidden = false;
  }
  input.addEventListener("input", () => { picked = -1; suggest(); });
  input.addEventListener("keydown", (event) => {
    const items = [...suggestions.querySelectorAll("li")];
    if (!suggestions.hidden && items.length && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      picked = (picked + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      items.forEach((item, index) => item.setAttribute("aria-selected", String(index === picked)));
      return;
    }
    if (!suggestions.hidden && items.length && (event.key === "Tab" || (event.key === "Enter" && picked >= 0))) {
      event.preventDefault();
      const chosen = commands.filter((command) => command.value.startsWith(input.value))[Math.max(picked, 0)];
      if (chosen) input.value = chosen.value;
      hideSuggestions();
      return;
    }
    if (event.key === "Escape") { hideSuggestions(); return; }
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); submit(); });
  stop.addEventListener("click", async () => {
    try { await postJson(`/api/chat/${conversation}/stop`, {}); } catch (error) { note(error.message, "bubble error"); }
  });
  listen();
}

switch (document.body.dataset.page) {
  case "skills": skillsPage(); break;
  case "playground": playgroundPage(); break;
  case "chat": chatPage(); break;
  default: break;
}
