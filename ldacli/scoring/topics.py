"""What ``ldacli topics`` shows of a model: each topic's most probable words and, when asked,
their coherence and the topics' diagnostics against a reference corpus (:func:`topic_summary`),
the one call the command makes."""

from __future__ import annotations

from ldacli import settings
from ldacli.api_input import as_corpus, is_path
from ldacli.corpora.formats.read import INPUT_FORMAT, VOCAB
from ldacli.errors import SettingError
from ldacli.model import TOP_WORDS, Model
from ldacli.scoring.coherence import MEASURE, REFERENCE, coherence, training_reference
from ldacli.scoring.diagnostics import DIAGNOSTICS, diagnostics
from ldacli.signatures import takes_settings

SETTINGS = (TOP_WORDS, MEASURE, DIAGNOSTICS, REFERENCE)
READING = (INPUT_FORMAT, VOCAB)


@takes_settings(SETTINGS, READING)
def topic_summary(model, **given) -> dict:
    """The topics of ``model`` (a :class:`~ldacli.model.Model` or a model file's path) as ``ldacli
    topics`` shows them: ``model`` (loaded, with its training documents' proportions only when
    ``diagnostics`` needs them), ``top_words`` (each topic's ``top_words`` most probable words
    with their probabilities, :meth:`~ldacli.model.Model.top_words`), ``coherence`` (with a
    measure: :func:`~ldacli.scoring.coherence.coherence`'s result, with ``reference`` naming the
    corpus) and ``diagnostics`` (:func:`~ldacli.scoring.diagnostics.diagnostics`'s result, when
    asked), each None otherwise, and ``notes``, what the reader said of a corpus given by its
    path. Both score against ``corpus`` (anything :func:`ldacli.api_input.as_corpus` takes; a
    path read for the model with ``input_format`` and ``vocab``), by default the training corpus
    when it can be found unchanged (:func:`~ldacli.scoring.coherence.training_reference`)."""
    settings.check_names((*SETTINGS, *READING), given)
    reading = {s.name: given.pop(s.name) for s in READING if s.name in given}
    values = {s.name: s.check(given.get(s.name)) for s in SETTINGS}
    n = TOP_WORDS.default if values["top_words"] is None else values["top_words"]
    measure, diagnosing, corpus = values["coherence"], bool(values["diagnostics"]), values["corpus"]
    if measure is None and not diagnosing:
        for name, value in {"corpus": corpus, **reading}.items():
            if value is not None:
                raise SettingError(name, f"{name} applies with coherence or diagnostics only", ("coherence",))
    m = model if isinstance(model, Model) else Model.load(model, documents=diagnosing)
    scores = diagnosed = None
    notes: list[str] = []
    if measure is not None or diagnosing:
        if corpus is None:
            reference, name = training_reference(m), m.params.get("corpus_source", "")
        else:
            reference, name = as_corpus(corpus, argument="corpus", reading=reading, model=m), corpus
            notes = list(reference.notes) if is_path(corpus) else []
        if measure is not None:
            scores = {**coherence(m, reference, measure=measure, top_words=n), "reference": name}
        if diagnosing:
            diagnosed = diagnostics(m, reference, top_words=n)
    return {"model": m, "top_words": m.top_words(n), "coherence": scores, "diagnostics": diagnosed, "notes": notes}
