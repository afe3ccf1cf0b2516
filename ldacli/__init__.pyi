# The public names of `import ldacli`, each imported from where it lives when first used (the
# lazy loader of __init__.py reads these lines); type checkers and the API reference read them too.

from .corpora.corpus import Corpus
from .corpora.formats.read import read_corpus
from .corpora.formats.shards import ShardFolder, open_shard_folder
from .corpora.formats.write import write_corpus, write_shards
from .diff import align, diff_models, match_topics
from .errors import InputError, LdacliError, RunStopped, SettingError, TrainingInterrupted
from .estimator import LatentDirichletAllocation
from .exporting import export, to_pyldavis
from .info import describe
from .methods.driver import train
from .methods.registry import METHODS
from .model import Checkpoint, Inference, Model
from .model_selection import select_k
from .over_time.history import TopicHistory, history
from .over_time.trends import trends
from .scoring.coherence import coherence
from .scoring.diagnostics import diagnostics
from .scoring.inference import infer
from .scoring.perplexity import perplexity
from .topic_names import name_topic
from .version import __version__

load_model = Model.load
