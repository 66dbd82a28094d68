# lit configuration of the compiler tests. Run through the generated
# lit.site.cfg.py in the build tree, which says where the tools are.
import os
import re
import sys

import lit.formats

config.name = "strata-compiler"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# Inputs/ holds files that tests read, not tests.
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)


def add_tool(name, directory):
    # Substitute the tool's name only where it stands as a word of its own, not
    # inside a path or a longer name.
    pattern = r"(?<![\w/.-])" + re.escape(name) + r"(?![\w/.-])"
    config.substitutions.append((pattern, os.path.join(directory, name)))


for tool in ["compile-module", "strata-opt", "dump-module", "run-module"]:
    if not os.path.exists(os.path.join(config.strata_tools_dir, tool)):
        lit_config.fatal("%s is not built; build it first (ninja %s)" % (tool, tool))
    add_tool(tool, config.strata_tools_dir)
# Built where AMD's code-object library is installed.
if os.path.exists(os.path.join(config.strata_tools_dir, "rocm-code-objects")):
    config.available_features.add("rocm-code-objects")
    add_tool("rocm-code-objects", config.strata_tools_dir)
for tool in ["FileCheck", "not", "split-file"]:
    add_tool(tool, config.llvm_tools_dir)
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%samples", os.path.join(config.strata_source_dir, "samples")))
