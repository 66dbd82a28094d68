# lit configuration of the runtime tools' tests: each .test file compiles a
# small program (run-module/Inputs/: in the vm dialect, or a model in func +
# linalg) with compile-module, runs it with run-module, benchmark-module or
# dump-module and checks the output with FileCheck (traces through
# check_trace.py).
# Run through the generated lit.site.cfg.py in the build tree.
import os
import re
import subprocess
import sys

import lit.formats

config.name = "strata-tools"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strata_binary_dir, "tests", "tools")


def add_tool(name, directory):
    # Substitute the tool's name only where it stands as a word of its own.
    pattern = r"(?<![\w/.-])" + re.escape(name) + r"(?![\w/.-])"
    config.substitutions.append((pattern, os.path.join(directory, name)))


for tool in ["compile-module", "run-module", "dump-module"]:
    if not os.path.exists(os.path.join(config.strata_tools_dir, tool)):
        lit_config.fatal("%s is not built; build it first (ninja %s)" % (tool, tool))
    add_tool(tool, config.strata_tools_dir)
# Built only where Google Benchmark is installed.
if os.path.exists(os.path.join(config.strata_tools_dir, "benchmark-module")):
    add_tool("benchmark-module", config.strata_tools_dir)
    config.available_features.add("benchmark-module")
for tool in ["FileCheck", "not"]:
    add_tool(tool, config.llvm_tools_dir)
config.substitutions.append(("%npy", "%s %s" % (sys.executable,
                                                os.path.join(config.test_source_root, "npy_tool.py"))))
config.substitutions.append(("%check_trace", "%s %s" % (sys.executable,
                                                        os.path.join(config.test_source_root, "check_trace.py"))))
config.substitutions.append(("%python", sys.executable))

# Files the tests write with NumPy itself, and check with it, when it is there.
if subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True).returncode == 0:
    config.available_features.add("numpy")
if "cpu-task" in subprocess.run(
        [os.path.join(config.strata_tools_dir, "run-module"), "--list-devices"],
        capture_output=True, text=True).stdout:
    config.available_features.add("cpu-task")
