# skillbox Skills Protocol runner: calls a skill's export function (execute_skill) or the
# entrypoint of model-written code (run_code) inside the sandbox.
#
# It reads one JSON request from stdin. Everything the code prints goes to stderr, which the
# runtime keeps as the run's logs; the one JSON result line goes to the original stdout.
#
# Request: {"target": {"kind": "export", "skill": NAME, "export": FUNCTION}
#                   | {"kind": "code", "code": SOURCE, "entrypoint": FUNCTION},
#           "args": {...},
#           "skills": [{"name": NAME, "module": DOTTED, "path": DIR, "entrypoint": FILE|null}],
#           "blobs": {"blob:<id>": PATH}, "workspace": DIR, "runtime_path": DIR}
# Result: {"ok": true, "output": VALUE} or {"ok": false, "error": {"type": ..., "message": ...}}
# Only what every run needs is imported up front: interpreter start-up is most of a run's cost,
# and asyncio, inspect and traceback alone would add tens of milliseconds to each one.
import importlib.machinery
import importlib.util
import json
import os
import sys

CODE_FILENAME = "<run_code>"


class RunError(Exception):
    """A failure of the run itself (not of the code), reported with its own type name."""

    def __init__(self, error_type, message):
        super().__init__(message)
        self.error_type = error_type


class SkillImporter:
    """Makes `import skills.<dotted.name>` load a mounted skill (a meta path finder; it does not
    subclass importlib.abc.MetaPathFinder because importing that module costs 20 ms).

    A skill with a Python entrypoint becomes a package whose code is the entrypoint file and
    whose folder is the entrypoint's folder, so the entrypoint's relative imports work. A skill
    without one becomes a namespace package over its folder.
    """

    def __init__(self, skills):
        self.skills = {}
        self.parents = {"skills"}
        for skill in skills:
            module = skill.get("module")
            if not module:
                continue
            fullname = "skills." + module
            self.skills[fullname] = skill
            parts = fullname.split(".")
            for end in range(2, len(parts)):
                self.parents.add(".".join(parts[:end]))

    def find_spec(self, fullname, path=None, target=None):
        skill = self.skills.get(fullname)
        if skill is not None:
            entrypoint = skill.get("entrypoint")
            if entrypoint:
                file = os.path.join(skill["path"], entrypoint)
                return importlib.util.spec_from_file_location(
                    fullname, file, submodule_search_locations=[os.path.dirname(file)]
                )
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [skill["path"]]
            return spec
        if fullname in self.parents:
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = []
            return spec
        return None


def emit(result_fd, payload):
    data = (json.dumps(payload, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    view = memoryview(data)
    while view:
        written = os.write(result_fd, view)
        view = view[written:]


def load_target(request):
    target = request["target"]
    if target["kind"] == "export":
        name = target["skill"]
        skill = next(skill for skill in request["skills"] if skill["name"] == name)
        module = importlib.import_module("skills." + skill["module"])
        function_name = target["export"]
        function = getattr(module, function_name, None)
        if not callable(function):
            raise RunError(
                "ExportNotFound",
                "skill `%s` has no function `%s` in `%s` (skill.toml [runtime].export)"
                % (name, function_name, skill["entrypoint"]),
            )
        return function
    code = target["code"]
    module = type(sys)("__run_code__")
    module.__file__ = CODE_FILENAME
    sys.modules["__run_code__"] = module
    exec(compile(code, CODE_FILENAME, "exec"), module.__dict__)
    function_name = target["entrypoint"]
    function = module.__dict__.get(function_name)
    if not callable(function):
        raise RunError(
            "EntrypointNotFound",
            "the code defines no function `%s`; define `def %s(args):` and return a JSON value"
            % (function_name, function_name),
        )
    return function


def describe(error):
    if isinstance(error, RunError):
        return {"type": error.error_type, "message": str(error)}
    if isinstance(error, SystemExit):
        return {"type": "SystemExit", "message": "the code called exit(%r)" % (error.code,)}
    message = str(error)
    if isinstance(error, SyntaxError) and error.lineno:
        message = "%s (%s, line %d)" % (error.msg, error.filename, error.lineno)
    return {"type": type(error).__name__, "message": message or type(error).__name__}


def main():
    result_fd = os.dup(1)
    os.dup2(2, 1)
    request = json.loads(sys.stdin.buffer.read())
    sys.stdin = open(os.devnull)
    sys.stdout = sys.stderr
    sys.argv = ["skillbox-run"]
    os.chdir(request["workspace"])
    sys.path.insert(0, request["runtime_path"])
    import runtime

    runtime._configure(request["blobs"], request["workspace"])
    sys.meta_path.insert(0, SkillImporter(request["skills"]))
    # Each entrypoint's folder is importable too, so `from helpers import x` works (with two
    # skills mounted, the first one's `helpers` wins: relative imports never clash).
    for skill in request["skills"]:
        if skill.get("entrypoint"):
            sys.path.append(os.path.dirname(os.path.join(skill["path"], skill["entrypoint"])))
    try:
        function = load_target(request)
        value = function(request["args"])
        if hasattr(value, "__await__"):
            import asyncio

            value = asyncio.run(value)
    except BaseException as error:  # the code's failure is the run's result
        import linecache
        import traceback

        if request["target"]["kind"] == "code":
            code = request["target"]["code"]
            linecache.cache[CODE_FILENAME] = (len(code), None, code.splitlines(True), CODE_FILENAME)
        traceback.print_exc()
        emit(result_fd, {"ok": False, "error": describe(error)})
        return
    try:
        emit(result_fd, {"ok": True, "output": value})
    except (TypeError, ValueError) as error:
        emit(
            result_fd,
            {
                "ok": False,
                "error": {
                    "type": type(error).__name__,
                    "message": "the value returned cannot be sent as JSON: %s" % error,
                },
            },
        )


main()
