# lit configuration for the VM op tests: each .mlir file is compiled with
# compile-module and run with vm-test-runner (the `check` module linked in).
import os

import lit.formats

config.name = "strata-vm-ops"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strata_binary_dir, "tests", "vm", "ops")

config.environment["PATH"] = os.pathsep.join(
    [config.strata_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
