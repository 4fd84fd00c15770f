"""The conformance kit: hold any attention function to torch's SDPA semantics, feature by feature.

``check_attention(fn, api="torch" | "numpy", seed=0)`` returns a ``Report``; ``attnlab conform
TARGET`` does the same from the shell; ``attnlab.conform.pytest.conformance_tests(fn)`` puts it in
a project's own test suite.
"""

from .cases import FEATURE_IDS, FEATURES, OPT_IN_IDS, Case, Feature
from .report import FAIL, PASS, SEE, UNSUPPORTED, Failure, FeatureResult, Report
from .run import APIS, check_attention
from .target import load_target

__all__ = [
    "APIS",
    "FAIL",
    "FEATURES",
    "FEATURE_IDS",
    "OPT_IN_IDS",
    "PASS",
    "SEE",
    "UNSUPPORTED",
    "Case",
    "Failure",
    "Feature",
    "FeatureResult",
    "Report",
    "check_attention",
    "load_target",
]
