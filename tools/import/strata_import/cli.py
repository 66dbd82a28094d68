"""What strata-import-torch and strata-import-onnx share: finding a Python with
torch-mlir, and ending with one error line and status 1 instead of a traceback.
"""
import importlib.util
import os
import signal
import sys

from . import ImportFailure

# The venv tools/dev/setup-python.sh makes, relative to this file.
VENV_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "..", "..", "build", "venv", "bin", "python")


def ensure_python(tool, modules):
    """Re-runs the tool with build/venv's Python when this one lacks the modules."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    venv = os.path.normpath(VENV_PYTHON)
    if os.path.exists(venv) and not os.environ.get("STRATA_IMPORT_REEXEC"):
        os.environ["STRATA_IMPORT_REEXEC"] = "1"
        os.execv(venv, [venv, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    names = " and ".join(missing) + (" is" if len(missing) == 1 else " are")
    sys.stderr.write("%s: %s not installed for %s; run tools/dev/setup-python.sh (it makes "
                     "build/venv, which this tool then uses) or run the tool with a Python "
                     "that has them\n" % (tool, names, sys.executable))
    sys.exit(1)


def quiet_torch_logs():
    """Keeps torch's import-time notices (no triton on a CPU machine) off stderr."""
    import logging
    for name in ("torch.utils.flop_counter", "torch._inductor", "torch._dynamo"):
        logging.getLogger(name).setLevel(logging.ERROR)


def size_text(size):
    """1234567 -> '1.2 MB', 2345 -> '2.3 KB'."""
    return "%.1f MB" % (size / 1e6) if size >= 1e6 else "%.1f KB" % (size / 1e3)


def _call(tool, main):
    """main()'s exit status; an ImportFailure or any other error is one line on stderr."""
    try:
        main()
        return 0
    except ImportFailure as error:
        sys.stderr.write("%s: %s\n" % (tool, error))
        return 1
    except KeyboardInterrupt:
        return 130
    except SystemExit as error:  # argparse's usage errors, sys.exit(...)
        if error.code is None or isinstance(error.code, int):
            return error.code or 0
        sys.stderr.write("%s\n" % error.code)
        return 1
    except BaseException as error:
        text = " ".join(str(error).split())[:400]
        sys.stderr.write("%s: %s: %s\n" % (tool, type(error).__name__, text))
        return 1


def run(tool, main):
    """Runs main() in a child process and exits with its status.

    An error is one line on stderr and status 1, never a traceback. The child
    keeps a crash in native code (torch-mlir has segfaulted on some ONNX models)
    from ending the tool silently: the parent reports the signal as one line.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = _call(tool, main)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except KeyboardInterrupt:
            continue  # the child got the interrupt too; wait for it to end
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGINT:
            sys.exit(130)
        sys.stderr.write("%s: crashed with %s inside torch-mlir or PyTorch, which this model "
                         "triggers (a bug of theirs); no output was written\n" % (
                             tool, signal.Signals(number).name))
        sys.exit(1)
    sys.exit(os.WEXITSTATUS(status))
