# lit configuration for Kiln's text-IR and tool tests.
import os
import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".kiln", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_bin_dir, "tests", "lit")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]

config.substitutions.append(("%kiln", os.path.join(config.kiln_bin_dir, "tools", "kiln")))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%examples", os.path.join(config.kiln_src_root, "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.environment["KILN_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")
import sys
config.substitutions.insert(0, (r"(?<![\w.-])not(?![\w.-])", sys.executable + " " + os.path.join(config.test_source_root, "not.py")))
config.excludes.append("not.py")
config.substitutions.append(("%python", sys.executable))
