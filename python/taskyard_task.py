"""taskyard_task: report a Python Task's steps, progress, metrics, artifacts and output to taskyard.

Standard library only; every Python process a taskyard Task starts can ``import taskyard_task``
(the runner puts this file's directory on PYTHONPATH). It speaks the Task protocol, version 1
(docs/task-protocol.md): one JSON object per line on the descriptor named by TASKYARD_PROTOCOL_FD.
Outside taskyard (no such descriptor) every call prints what it would have reported, so the same
script runs by hand.

    import taskyard_task as tt

    lr = tt.inputs().get("lr", 0.1)
    with tt.step("train"):
        for epoch in range(10):
            tt.progress((epoch + 1) * 10)
            tt.metric("loss", 1 / (epoch + 1), step=epoch)
    tt.artifact("model", "model.txt")
    tt.output({"final_loss": 0.1})

Under taskyard, an uncaught exception fails the Task with ``<ExceptionType>: <message>`` (its
traceback goes to task.log), and SIGTERM (a cancel) raises ``Cancelled`` (a KeyboardInterrupt) in
the main thread, so ``finally`` blocks and ``except KeyboardInterrupt`` clean-ups run.
"""

import functools
import json
import math
import os
import re
import signal
import sys
import threading

__all__ = [
    "Cancelled", "artifact", "inputs", "log", "metric", "output", "progress",
    "source_task_dir", "step", "task_dir", "PROTOCOL_VERSION",
]

#: The Task protocol version this module speaks.
PROTOCOL_VERSION = 1

_lock = threading.Lock()


def _channel():
    value = os.environ.get("TASKYARD_PROTOCOL_FD", "")
    return int(value) if value.isdigit() else None


_fd = _channel()


class Cancelled(KeyboardInterrupt):
    """Raised in the main thread when taskyard cancels the Task (SIGTERM)."""


def _jsonable(value):
    """NumPy and PyTorch scalars and arrays, and anything else with ``item`` or ``tolist``."""
    for name in ("item", "tolist"):
        method = getattr(value, name, None)
        if callable(method):
            return method()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _finite(value):
    """NaN and infinities as None (JSON has no such numbers), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _send(report):
    """Writes one report line; outside taskyard, prints it for a person instead."""
    global _fd
    line = json.dumps(_finite(report), default=_jsonable, allow_nan=False, separators=(",", ":"))
    if _fd is None:
        print(f"[taskyard] {line}", flush=True)
        return
    data = (line + "\n").encode("utf-8")
    with _lock:
        try:
            while data:
                data = data[os.write(_fd, data):]
        except OSError:
            # The runner is gone (a cancel): what the script does next still reaches its log.
            _fd = None


class step:
    """A named step, as a context manager (``with step("train"):``) or a decorator (``@step("train")``
    or ``@step``, named after the function). Its start and end are recorded in the Task's status."""

    def __init__(self, name):
        if callable(name):
            self._fn, self.name = name, name.__name__
            functools.update_wrapper(self, name)
        else:
            if not isinstance(name, str) or not name:
                raise ValueError("step name must be a non-empty string")
            self._fn, self.name = None, name

    def __enter__(self):
        _send({"type": "step_start", "name": self.name})
        return self

    def __exit__(self, *exc):
        _send({"type": "step_end", "name": self.name})
        return False

    def __call__(self, *args, **kwargs):
        if self._fn is not None:
            with step(self.name):
                return self._fn(*args, **kwargs)
        fn = args[0]

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with step(self.name):
                return fn(*a, **k)

        return wrapper


def progress(percentage):
    """Percentage (0-100) of the current step (of a step named after the Task outside any)."""
    if isinstance(percentage, bool) or not isinstance(percentage, (int, float)) or not 0 <= percentage <= 100:
        raise ValueError(f"progress percentage must be a number from 0 to 100, got {percentage!r}")
    _send({"type": "progress", "percentage": percentage})


def metric(name, value, step=None):
    """One point of the metric series ``name``; ``step`` (an int) is its x, else the time it was recorded."""
    if not isinstance(name, str) or not name:
        raise ValueError("metric name must be a non-empty string")
    item = getattr(value, "item", None)
    value = float(item() if callable(item) else value)
    report = {"type": "metric", "name": name, "value": value if math.isfinite(value) else None}
    if step is not None:
        report["step"] = int(step)
    _send(report)


def artifact(name, path):
    """Registers a file of the Task directory as the artifact ``name``; taskyard records its size and sha256."""
    if not isinstance(name, str) or not name:
        raise ValueError("artifact name must be a non-empty string")
    path = os.fspath(path)
    if os.path.isabs(path):
        path = os.path.relpath(path, task_dir())
    _send({"type": "artifact", "name": name, "path": path})


def output(values=None, **fields):
    """Output fields of the Task (merged over earlier ones); checked against its output schema at the end."""
    merged = dict(values or {}, **fields)
    _send({"type": "output", "values": merged})


def log(message, level="info"):
    """A timestamped line in task.log (``level``: debug, info, warning or error). Plain prints land there too."""
    _send({"type": "log", "message": str(message), "level": level})


def inputs():
    """The Task's inputs (validated, defaults filled) as a dict; outside taskyard, those of the JSON file
    named by TASKYARD_INPUTS, or {}."""
    path = os.environ.get("TASKYARD_INPUTS")
    if not path:
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def task_dir():
    """The Task directory (its files, artifacts and log); outside taskyard, the working directory."""
    return os.environ.get("TASKYARD_TASK_DIR") or os.getcwd()


_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}#[A-Za-z0-9][A-Za-z0-9_.-]{0,63}#[A-Za-z0-9-]{1,32}$")


def source_task_dir(task_id):
    """The directory of another Task (one of ``source_tasks``) in this workspace."""
    if not isinstance(task_id, str) or not _TASK_ID.match(task_id):
        raise ValueError(f"not a Task ID (<task_type>#<registration>#<task_name>): {task_id!r}")
    workspace = os.environ.get("TASKYARD_WORKSPACE") or os.getcwd()
    path = os.path.join(workspace, task_id.split("#", 1)[0], task_id)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no Task directory for {task_id} in {workspace}")
    return path


def _report_uncaught(kind, exc, tb):
    if not issubclass(kind, Cancelled) and not issubclass(kind, SystemExit):
        _send({"type": "error", "error_type": kind.__name__, "message": str(exc)})
    _previous_hook(kind, exc, tb)


def _on_sigterm(signum, frame):
    raise Cancelled("the Task was cancelled (SIGTERM)")


_previous_hook = sys.excepthook
if _fd is not None:
    sys.excepthook = _report_uncaught
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:
        pass  # imported outside the main thread: SIGTERM keeps its default
