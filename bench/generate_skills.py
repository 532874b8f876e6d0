#!/usr/bin/env python3
"""Generate a deterministic tree of Agent Skills for the catalog benchmark.

    python3 bench/generate_skills.py OUT_DIR [--count 10000] [--seed 1] [--force]

Layout (fractions are approximate, drawn from a seeded RNG):
  * ~70% flat:            OUT_DIR/<name>/SKILL.md
  * ~18% one level deep:  OUT_DIR/<group>/<name>/SKILL.md
  * ~12% two levels deep: OUT_DIR/<vendor>/<group>/<name>/SKILL.md
  * ~40% have scripts/ with a .py and/or .sh file
  * ~20% have references/*.md
  * ~15% (only among those with scripts) have a valid tools.json
  * exactly round(count * 2%) are invalid on purpose, cycling through:
    uppercase name, name that differs from its folder, description over 1024 chars

Frontmatter uses only the spec fields (name, description, license, allowed-tools,
metadata, compatibility), in block YAML style, so skills-ref's strictyaml accepts it.

The same (count, seed, generator source) always gives byte-identical output. The tree
is built in OUT_DIR.tmp and renamed into place; OUT_DIR/.generator.json records the
parameters and totals, which bench/catalog.sh uses to decide whether to regenerate.
Only the Python standard library is used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
from pathlib import Path

# --------------------------------------------------------------------------- vocabulary

SUBJECTS = [
    "pdf", "csv", "json", "yaml", "sql", "git", "docker", "k8s", "terraform", "api",
    "invoice", "changelog", "release", "commit", "log", "metric", "alert", "ticket",
    "email", "slack", "calendar", "budget", "contract", "resume", "schema", "image",
    "audio", "video", "slide", "spreadsheet", "markdown", "html", "css", "regex",
    "cron", "dns", "tls", "ssh", "backup", "database", "cache", "queue", "webhook",
    "oauth", "graphql", "grpc", "protobuf", "openapi", "dependency", "license",
    "test", "coverage", "benchmark", "profile", "trace", "incident", "runbook",
    "onboarding", "meeting", "survey", "translation", "glossary", "citation",
    "diagram", "chart", "dataset", "notebook", "model", "prompt", "embedding",
]
ACTIONS = [
    "extract", "convert", "lint", "format", "summarize", "review", "audit", "report",
    "validate", "migrate", "generate", "analyze", "diff", "merge", "triage", "draft",
    "translate", "index", "search", "clean", "redact", "compress", "monitor", "plan",
    "explain", "compare", "scaffold", "deploy", "rollback", "annotate", "classify",
]
QUALIFIERS = [
    "fast", "batch", "safe", "team", "local", "cloud", "daily", "weekly", "smart",
    "strict", "quick", "bulk", "secure", "minimal", "pro", "lite", "legacy", "multi",
]
GROUPS = [
    "data", "devops", "docs", "security", "finance", "marketing", "engineering",
    "support", "research", "design", "legal", "operations", "analytics", "platform",
]
VENDORS = ["acme", "contoso", "initech", "globex", "umbrella", "hooli", "vandelay", "wonka"]
LICENSES = ["MIT", "Apache-2.0", "BSD-3-Clause", "Proprietary", "MPL-2.0"]
AUTHORS = [
    "platform-team", "data-guild", "sec-ops", "docs-crew", "release-eng", "ml-infra",
    "growth-team", "finance-tools", "support-automation",
]
TOOLS_ALLOWED = ["Read", "Write", "Edit", "Grep", "Glob", "Bash", "WebFetch"]
COMPAT = [
    "Requires python3 on PATH",
    "Needs git 2.30 or newer and a POSIX shell",
    "Works offline; needs read access to the project folder",
    "Requires network access to the company API gateway",
    "Designed for Claude Code and compatible agent runtimes",
    "Needs docker and a running daemon",
]
OBJECTS = [
    "the selected files", "a pull request", "the current repository", "an uploaded document",
    "a folder of reports", "the staging environment", "a customer conversation",
    "last week's data", "a draft written by the user", "the build output",
    "a spreadsheet export", "the service configuration", "a long transcript",
]
OUTCOMES = [
    "a short structured summary", "a checklist of problems with suggested fixes",
    "a clean machine-readable file", "a table ready to paste into a report",
    "a reviewed and annotated copy", "a prioritised list of next steps",
    "a diff that can be applied directly", "a one-page brief for stakeholders",
]
TRIGGERS = [
    "when the user asks to", "whenever someone wants to", "if a task involves the need to",
    "when asked to", "for requests that",
]
FILLER = [
    "Keep the original wording where it matters and flag anything ambiguous.",
    "Prefer small, reviewable changes over sweeping rewrites.",
    "Always state assumptions before acting on them.",
    "Stop and ask when the input is incomplete instead of guessing.",
    "Report numbers with their units and the period they cover.",
    "Quote file paths exactly as they appear in the repository.",
    "Do not send data outside the workspace unless the user confirms.",
    "Group related findings so the reader can skim the result.",
    "Mention which checks were skipped and why.",
    "Use the helper scripts when they exist rather than re-implementing them.",
    "Cite the section of the reference material that supports each point.",
    "Make the output deterministic so reruns can be compared.",
]
PARAM_TYPES = ["string", "string", "string", "number", "integer", "boolean"]
PARAM_NAMES = [
    "path", "text", "limit", "format", "query", "threshold", "dry_run", "output",
    "pattern", "encoding", "max_items", "verbose", "since", "target",
]


# --------------------------------------------------------------------------- text pieces


def title_of(name: str) -> str:
    return " ".join(part.capitalize() for part in name.split("-"))


def make_description(rng: random.Random, subject: str, action: str, lo: int = 80, hi: int = 400) -> str:
    """A plain-scalar-safe description (no ': ', no ' #', no '---') of about lo..hi chars,
    made of whole sentences."""
    target = rng.randint(lo, hi)
    sentences = [
        f"{action.capitalize()}s {subject} content from {rng.choice(OBJECTS)} and produces "
        f"{rng.choice(OUTCOMES)}.",
        f"Use {rng.choice(TRIGGERS)} {action} {subject} material.",
    ]
    text = sentences[0]
    if target >= 150:
        text += " " + sentences[1]
    while True:
        extra = rng.choice(FILLER)
        if len(text) + 1 + len(extra) > target and len(text) >= lo:
            break
        text += " " + extra
    return text


def yaml_description(rng: random.Random, description: str) -> str:
    """Render the description in one of three block-style spellings."""
    roll = rng.random()
    if roll < 0.80:
        return f"description: {description}\n"
    if roll < 0.95:
        escaped = description.replace("\\", "\\\\").replace('"', '\\"')
        return f'description: "{escaped}"\n'
    # folded block scalar, wrapped at ~70 columns
    lines, line = [], ""
    for word in description.split(" "):
        if line and len(line) + 1 + len(word) > 70:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "description: >-\n" + "".join(f"  {text}\n" for text in lines)


def make_frontmatter(rng: random.Random, name: str, description: str) -> str:
    out = ["---\n", f"name: {name}\n", yaml_description(rng, description)]
    if rng.random() < 0.55:
        out.append(f"license: {rng.choice(LICENSES)}\n")
    if rng.random() < 0.15:
        tools = rng.sample(TOOLS_ALLOWED, rng.randint(1, 4))
        out.append(f"allowed-tools: {' '.join(tools)}\n")
    if rng.random() < 0.60:
        out.append("metadata:\n")
        out.append(f"  author: {rng.choice(AUTHORS)}\n")
        out.append(f'  version: "{rng.randint(0, 3)}.{rng.randint(0, 12)}"\n')
        if rng.random() < 0.4:
            out.append(f"  category: {rng.choice(GROUPS)}\n")
        if rng.random() < 0.2:
            out.append(f'  reviewed: "{2023 + rng.randint(0, 2)}-{rng.randint(1, 12):02d}"\n')
    if rng.random() < 0.25:
        out.append(f"compatibility: {rng.choice(COMPAT)}\n")
    out.append("---\n")
    return "".join(out)


def make_body(rng: random.Random, name: str, subject: str, action: str,
              scripts: list[str], references: list[str]) -> str:
    target_lines = rng.randint(20, 200)
    lines = [f"# {title_of(name)}", "",
             f"This skill helps {action} {subject} material. {rng.choice(FILLER)}", ""]
    section = 0
    while len(lines) < target_lines:
        section += 1
        kind = rng.random()
        if section == 1 and scripts:
            lines += ["## Helper scripts", ""]
            for script in scripts:
                lines.append(f"- `{script}`: run it from the skill folder; it prints its result on stdout.")
            lines += ["", "```bash"]
            lines += [f"python3 {s}" if s.endswith(".py") else f"bash {s}" for s in scripts]
            lines += ["```", ""]
        elif section == 2 and references:
            lines += ["## Reference material", ""]
            lines += [f"- [{Path(r).stem}]({r}) when the task needs the details." for r in references]
            lines.append("")
        elif kind < 0.35:
            lines += [f"## Step {section}: {rng.choice(ACTIONS)} the {rng.choice(SUBJECTS)} input", ""]
            for step in range(1, rng.randint(3, 7)):
                lines.append(f"{step}. {rng.choice(FILLER)}")
            lines.append("")
        elif kind < 0.60:
            lines += [f"## Notes on {rng.choice(SUBJECTS)} handling", ""]
            for _ in range(rng.randint(2, 5)):
                lines.append(" ".join(rng.sample(FILLER, 2)))
            lines.append("")
        elif kind < 0.80:
            lines += ["## Example", "", "```text"]
            for i in range(rng.randint(3, 8)):
                lines.append(f"{subject}_{i}: {rng.choice(ACTIONS)} -> {rng.randint(0, 9999)}")
            lines += ["```", ""]
        else:
            lines += ["## Checklist", ""]
            for _ in range(rng.randint(3, 7)):
                lines.append(f"- [ ] {rng.choice(FILLER)}")
            lines.append("")
    return "\n".join(lines[:target_lines]) + "\n"


def make_python_script(rng: random.Random, name: str, subject: str) -> str:
    n = rng.randint(1, 4)
    helpers = "".join(
        f"\n\ndef step_{i}(rows):\n    \"\"\"Stage {i} of the {subject} pipeline.\"\"\"\n"
        f"    return [r for r in rows if len(r) > {i}]\n"
        for i in range(n)
    )
    calls = "".join(f"    rows = step_{i}(rows)\n" for i in range(n))
    return (
        "#!/usr/bin/env python3\n"
        f'"""Helper for the {name} skill."""\n\n'
        "import json\nimport sys\n"
        f"{helpers}\n\n"
        "def main() -> int:\n"
        "    rows = [line.rstrip('\\n') for line in sys.stdin]\n"
        f"{calls}"
        "    json.dump({'count': len(rows), 'rows': rows[:20]}, sys.stdout)\n"
        "    return 0\n\n\n"
        "if __name__ == '__main__':\n"
        "    sys.exit(main())\n"
    )


def make_shell_script(rng: random.Random, name: str) -> str:
    checks = "".join(
        f'command -v {tool} >/dev/null 2>&1 || {{ echo "missing {tool}" >&2; exit 1; }}\n'
        for tool in rng.sample(["git", "jq", "curl", "awk", "sed", "tar", "grep"], rng.randint(1, 4))
    )
    return (
        "#!/usr/bin/env bash\n"
        f"# Preflight for the {name} skill.\n"
        "set -euo pipefail\n\n"
        f"{checks}"
        'target="${1:-.}"\n'
        'find "$target" -type f -name "*.md" | head -n 50\n'
    )


def make_reference(rng: random.Random, topic: str) -> str:
    lines = [f"# {topic.capitalize()} reference", ""]
    for _ in range(rng.randint(3, 12)):
        lines += [f"## {rng.choice(SUBJECTS).capitalize()} {rng.choice(ACTIONS)}", "",
                  " ".join(rng.sample(FILLER, 3)), ""]
    return "\n".join(lines)


def make_tools_json(rng: random.Random, subject: str, action: str, scripts: list[str]) -> str:
    tools = []
    used: set[str] = set()
    for script in scripts:
        base = f"{action}_{subject}".replace("-", "_")
        tool_name = base if base not in used else f"{base}_{len(used) + 1}"
        used.add(tool_name)
        params = {}
        for pname in rng.sample(PARAM_NAMES, rng.randint(1, 3)):
            ptype = rng.choice(PARAM_TYPES)
            params[pname] = {"type": ptype, "description": f"The {pname.replace('_', ' ')} to use ({ptype})."}
        tools.append({
            "name": tool_name,
            "description": f"{action.capitalize()} {subject} input with {script} and return the result as JSON.",
            "script": script,
            "parameters": params,
        })
    return json.dumps(tools, indent=2) + "\n"


# --------------------------------------------------------------------------- tree


def unique_name(rng: random.Random, taken: set[str]) -> tuple[str, str, str]:
    subject, action = rng.choice(SUBJECTS), rng.choice(ACTIONS)
    parts = [subject, action]
    if rng.random() < 0.5:
        parts.insert(0, rng.choice(QUALIFIERS))
    name = "-".join(parts)
    suffix = 2
    candidate = name
    while candidate in taken:
        candidate = f"{name}-{suffix}"
        suffix += 1
    taken.add(candidate)
    return candidate, subject, action


def generate(out: Path, count: int, seed: int) -> dict:
    rng = random.Random(seed)
    n_invalid = round(count * 0.02)
    invalid_at = {i: k for k, i in enumerate(sorted(rng.sample(range(count), n_invalid)))}
    kinds = ["uppercase-name", "name-folder-mismatch", "description-too-long"]
    taken: set[str] = set()
    stats = {"skills": 0, "invalid": 0, "invalid_by_kind": {k: 0 for k in kinds},
             "flat": 0, "nested1": 0, "nested2": 0, "with_scripts": 0,
             "with_references": 0, "with_tools_json": 0, "files": 0, "bytes": 0}

    def write(path: Path, text: str) -> None:
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        stats["files"] += 1
        stats["bytes"] += len(data)

    for i in range(count):
        name, subject, action = unique_name(rng, taken)
        roll = rng.random()
        if roll < 0.70:
            parent, stats["flat"] = out, stats["flat"] + 1
        elif roll < 0.88:
            parent, stats["nested1"] = out / rng.choice(GROUPS), stats["nested1"] + 1
        else:
            parent = out / rng.choice(VENDORS) / rng.choice(GROUPS)
            stats["nested2"] += 1

        folder = name
        fm_name = name
        description = make_description(rng, subject, action)
        kind = kinds[invalid_at[i] % len(kinds)] if i in invalid_at else None
        if kind == "uppercase-name":
            fm_name = folder = name.upper() if rng.random() < 0.5 else title_of(name).replace(" ", "-")
        elif kind == "name-folder-mismatch":
            fm_name = f"{name}-renamed"
        elif kind == "description-too-long":
            description = make_description(rng, subject, action, 1100, 1600)
        if kind:
            stats["invalid"] += 1
            stats["invalid_by_kind"][kind] += 1
        skill_dir = parent / folder

        scripts: list[str] = []
        if rng.random() < 0.40:
            roll = rng.random()
            if roll < 0.45:
                scripts = [f"scripts/{action}_{subject}.py"]
            elif roll < 0.75:
                scripts = ["scripts/run.sh"]
            else:
                scripts = [f"scripts/{action}_{subject}.py", "scripts/preflight.sh"]
            scripts = [s.replace("-", "_") for s in scripts]
        references: list[str] = []
        if rng.random() < 0.20:
            topics = rng.sample(SUBJECTS, rng.randint(1, 3))
            references = [f"references/{t}-guide.md" for t in topics]

        write(skill_dir / "SKILL.md",
              make_frontmatter(rng, fm_name, description) + "\n"
              + make_body(rng, name, subject, action, scripts, references))
        for script in scripts:
            text = (make_python_script(rng, name, subject) if script.endswith(".py")
                    else make_shell_script(rng, name))
            write(skill_dir / script, text)
            (skill_dir / script).chmod(0o755)
        for ref in references:
            write(skill_dir / ref, make_reference(rng, Path(ref).stem))
        if scripts and rng.random() < 0.375:  # ~15% of all skills
            write(skill_dir / "tools.json", make_tools_json(rng, subject, action, scripts))
            stats["with_tools_json"] += 1
        stats["with_scripts"] += bool(scripts)
        stats["with_references"] += bool(references)
        stats["skills"] += 1
    return stats


def generator_hash() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--force", action="store_true", help="replace OUT_DIR if it exists")
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be positive")

    out: Path = args.out_dir
    if out.exists() and any(out.iterdir()) and not args.force:
        print(f"generate_skills: {out} exists and is not empty (use --force)", file=sys.stderr)
        return 2
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    stats = generate(tmp, args.count, args.seed)
    stamp = {"count": args.count, "seed": args.seed, "generator": generator_hash(), **stats}
    (tmp / ".generator.json").write_text(json.dumps(stamp, indent=2) + "\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)

    print(
        f"generate_skills: {stats['skills']} skills in {out} "
        f"({stats['invalid']} invalid: {stats['invalid_by_kind']}), "
        f"{stats['files']} files, {stats['bytes']} bytes "
        f"({stats['bytes'] / 1048576:.1f} MiB); flat {stats['flat']}, nested1 {stats['nested1']}, "
        f"nested2 {stats['nested2']}; scripts {stats['with_scripts']}, "
        f"references {stats['with_references']}, tools.json {stats['with_tools_json']}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
