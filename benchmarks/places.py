"""Where the benchmarks find corpora and keep what they make, the same for every script:
``$LDACLI_CORPORA`` (default: ``shared/corpora`` beside the repository, the real public corpora)
and ``$LDACLI_DATA`` (default: ``data`` beside the repository: generated corpora, peers' builds,
raw text, models a benchmark keeps)."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(os.path.dirname(REPO), "shared", "corpora"))
DATA = os.environ.get("LDACLI_DATA", os.path.join(os.path.dirname(REPO), "data"))
