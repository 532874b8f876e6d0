# skillbox handler bootstrap for Python tools.
# Mode "once": read one request {handler, args} from stdin, answer on stdout, exit.
# Mode "serve": answer one JSON request per stdin line, one JSON answer per stdout line.
# A module with `handler(args)` is imported once and called; a module without one is run as a
# script with the JSON arguments on stdin, and its stdout is read as the result.
import ast
import importlib.util
import io
import json
import os
import runpy
import shutil
import sys
import traceback

answer_stream = sys.stdout
sys.stdout = sys.stderr
modules = {}


handler_checks = {}


def defines_handler(path):
    # Parsed once per file version: a warm call must not re-read and re-parse the handler.
    status = os.stat(path)
    key = (path, status.st_mtime_ns, status.st_size)
    known = handler_checks.get(key)
    if known is None:
        with open(path, "rb") as source:
            tree = ast.parse(source.read(), filename=path)
        known = any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "handler"
            for node in tree.body
        )
        handler_checks[key] = known
    return known


def load(path):
    module = modules.get(path)
    if module is None:
        spec = importlib.util.spec_from_file_location("skillbox_handler_%d" % len(modules), path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, path.rsplit("/", 1)[0])
        saved_stdin = sys.stdin
        sys.stdin = io.StringIO("")  # module code must not read the request pipe
        try:
            spec.loader.exec_module(module)
        finally:
            sys.stdin = saved_stdin
        modules[path] = module
    return module


def run_as_script(path, args):
    saved_stdin, saved_argv = sys.stdin, sys.argv
    captured = io.StringIO()
    sys.stdin, sys.argv, sys.stdout = io.StringIO(json.dumps(args)), [path], captured
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit:
        if exit.code not in (None, 0):
            raise RuntimeError("handler exited with status %s" % exit.code)
    finally:
        sys.stdin, sys.argv, sys.stdout = saved_stdin, saved_argv, sys.stderr
    text = captured.getvalue().strip()
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


def fresh_folder(path):
    # The call's own folder, made by the worker itself (as the sandbox user). Whatever an
    # earlier handler left at that name goes first.
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    os.mkdir(path, 0o700)


def remove_folder(path):
    if os.path.islink(path):
        os.unlink(path)
    else:
        shutil.rmtree(path, ignore_errors=True)


def call(request):
    work_dir = request.get("workDir")
    if work_dir:
        try:
            fresh_folder(work_dir)
        except OSError as error:
            return {"error": "cannot create the call's work folder: %s" % error}
    try:
        return call_handler(request)
    finally:
        if work_dir:
            remove_folder(work_dir)


def call_handler(request):
    try:
        path = request["handler"]
        if not defines_handler(path):
            return {"ok": run_as_script(path, request["args"])}
        handler = getattr(load(path), "handler", None)
        if not callable(handler):
            return {"error": "the handler module's `handler` is not callable"}
        return {"ok": handler(request["args"])}
    except Exception as error:  # the handler's failure becomes the tool's error
        traceback.print_exc(file=sys.stderr)
        message = str(error) or type(error).__name__
        return {"error": message}


def encode(identifier, outcome):
    try:
        return json.dumps(dict(id=identifier, **outcome)) + "\n"
    except (TypeError, ValueError) as error:
        return json.dumps({"id": identifier, "error": "the handler returned a value that is not JSON-serializable: %s" % error}) + "\n"


if len(sys.argv) > 1 and sys.argv[1] == "serve":
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as error:
            answer_stream.write(encode(None, {"error": "bad request: %s" % error}))
            answer_stream.flush()
            continue
        answer_stream.write(encode(request.get("id"), call(request)))
        answer_stream.flush()
else:
    request = json.loads(sys.stdin.read())
    answer_stream.write(encode(request.get("id", 0), call(request)))
    answer_stream.flush()
