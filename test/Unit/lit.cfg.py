# -*- Python -*-
# lit configuration for the GoogleTest unit tests under build/unittests.

import os

import lit.formats

config.name = "FP4TRAIN-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.fp4train_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
