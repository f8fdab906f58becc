#!/usr/bin/env python3
"""Hand check (issue 42): the first diverging node the reproducer names for this case, against
onnxruntime, with the node before it. numpy, onnx, onnxruntime and Aidge only. Run from anywhere:
python check_kws_batchnorm.py   (see README.md for the case, the figures and what they mean)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_node  # noqa: E402

sys.argv = [check_node.__file__, os.path.join(HERE, "kws-batchnorm"), "/bn1/BatchNormalization", "--calls", "1"]
sys.exit(check_node.main())
