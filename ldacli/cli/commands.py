"""The ``ldacli`` command line: click over the Python API, every option built from a setting's
declaration (:mod:`ldacli.settings`), none listed by hand.

Conventions, the same for every command: stdout carries results only; notes, progress and
errors go to stderr, an error as one line. ``--format`` chooses the output of a command that
prints results, ``--input-format`` how a corpus is read, ``-o -`` writes to stdout; ``-q``
silences notes and progress, ``-v`` adds the log. Exit codes: 0 success, 1 bad data and runtime
errors, 2 usage errors, 3 ``diff --max-drift`` exceeded or ``select-k``'s K not determined, 75
another run holds the lock, 130 stopped by SIGINT, 143 by SIGTERM.
"""

from __future__ import annotations

import logging
import os
import sys
import time

import click
import numpy as np

from ldacli import export as export_module
from ldacli import model_selection as choosing
from ldacli import settings
from ldacli.api_input import resumed_reading
from ldacli.cli.exits import EXIT_DRIFT, EXIT_UNDETERMINED, Command, user_errors
from ldacli.cli.former_options import taking_former_spellings
from ldacli.cli.options import (
    CONVERT_OUT,
    DIFF_OUT,
    MODEL_OUT,
    QUIET,
    REPORT_OUT,
    SKIP_UNCHANGED,
    SUFFIXES,
    TEXT_OR_JSON,
    THETA_FORMAT,
    THETA_FORMATS,
    THETA_OUT,
    TOPICS_FORMAT,
    TOPICS_OUT,
    VERBOSE,
    check_outputs,
    declared,
    format_setting,
    given_of,
    output_setting,
    reading_of,
    same_file,
    value,
)
from ldacli.cli.text import echo, emit, results_to, setup_logging, tell
from ldacli.cluster.connection import TLS, tls_options
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.read import (
    INPUT_FORMAT,
    READING,
    READING_FOR_MODEL,
    VOCAB,
    read_corpus,
)
from ldacli.corpora.formats.shards import is_shard_folder, open_shard_folder
from ldacli.corpora.formats.split import split_corpus
from ldacli.corpora.formats.stream import stream_corpus
from ldacli.corpora.formats.write import WRITE_FORMATS, write_corpus
from ldacli.diff import MAX_DRIFT, THRESHOLD, diff_models, drifted
from ldacli.errors import LdacliError, SettingError
from ldacli.escaping import json_text, printable
from ldacli.files.fileio import file_sha256
from ldacli.files.locking import locked
from ldacli.files.tables import (
    TABLE_FORMATS,
    check_stream,
    delimited_line,
    text_cell,
    write_lines,
    write_table,
)
from ldacli.info import describe as describe_file
from ldacli.info import format_text as format_info
from ldacli.methods.driver import SETTINGS as TRAIN
from ldacli.methods.driver import check_given, method_settings, unchanged
from ldacli.methods.driver import train as run_train
from ldacli.methods.registry import METHODS
from ldacli.memory import return_freed_memory
from ldacli.model import TOP_WORDS, Model
from ldacli.over_time import history as topic_history
from ldacli.over_time import outputs as over_time
from ldacli.over_time import trends as topic_trends
from ldacli.pages.report import SETTINGS as REPORT
from ldacli.pages.report import write_report, write_select_k_page
from ldacli.pages.webpage import REPORT_EXTRA
from ldacli.scoring import inference
from ldacli.scoring import perplexity as evaluate
from ldacli.scoring.coherence import MEASURE, REFERENCE, training_reference
from ldacli.scoring.coherence import coherence as topic_coherence
from ldacli.scoring.diagnostics import DIAGNOSTICS, FIELD_NAMES, THRESHOLDS, WORD_FIELDS
from ldacli.scoring.diagnostics import FIELDS as DIAGNOSTIC_FIELDS
from ldacli.scoring.diagnostics import diagnostics as diagnose
from ldacli.scoring.inference import SETTINGS as INFER
from ldacli.scoring.inference import SPARSE, write_inference
from ldacli.scoring.perplexity import SETTINGS as PERPLEXITY
from ldacli.scoring.perplexity import perplexity as compute_perplexity
from ldacli.scoring.perplexity import perplexity_stream
from ldacli.settings import Choice, Integer, Setting, Text
from ldacli.topic_names import name_topic

# --- how convert writes a corpus --------------------------------------------------------------------

WRITING = (
    Setting("to", Choice(WRITE_FORMATS), "ldac",
            "Output format: LDA-C, UCI bag-of-words, Matrix Market (documents x words) or a scipy sparse .npz "
            "(scipy.sparse.save_npz)."),
    Setting("vocab_out", Text(path=True), None, "Vocabulary file to write.",
            default_help="the name the readers look for beside the output"),
    Setting("shards", Integer(1), None,
            "Write a shard folder at -o instead: this many files of consecutive documents (as train --shards "
            "cuts them), an index and the vocabulary, for a Dask cluster whose workers read their own shards."),
)


def read(path: str, values: dict, *, model: Model | None = None):
    """Read the corpus at ``path`` with the reading settings in ``values`` (for ``model``, when
    one scores it: over its vocabulary, text tokenized by its tokenizer, the tokens of words
    its rules removed counted apart); its notes go to stderr, each once."""
    reading = reading_of(values)
    fmt = reading.pop("input_format", "auto")
    vocab = reading.pop("vocab", None)
    for_model = {} if model is None else model.reading()
    if vocab:  # the corpus's own vocabulary file (bag of words) or one fixing its tokens (text)
        for_model.pop("fixed_vocab", None)
    corpus = read_corpus(path, format=fmt, vocab=vocab, **for_model, **reading)
    for note in corpus.notes:
        tell(values, f"{path}: {note}")
    return corpus


# --- train --------------------------------------------------------------------------------------------

@click.command(cls=Command)
@taking_former_spellings("train")
@click.argument("corpus")
@declared((MODEL_OUT,), TRAIN, TLS, method_settings(), READING, (SKIP_UNCHANGED, QUIET, VERBOSE))
@click.pass_context
def train(ctx, corpus, **values):
    """Fit an LDA model to CORPUS by collapsed Gibbs sampling (default), variational EM or
    uncollapsed Gibbs sampling (--method).

    CORPUS is a UCI docword file, an LDA-C file, a text file (one document per line), a folder
    of .txt files, a Matrix Market or scipy .npz matrix, a shard folder (convert --shards; with
    --scheduler the workers read its files), or - for stdin; .gz is read transparently.

    With --resume CHECKPOINT alone (besides CORPUS and -o) the run continues exactly as it was
    asked: the settings the checkpoint fixes (method, K, priors, seed, sampler, shards,
    vocabulary rules, ...) come from it and may not change; those it continues (--iterations,
    --checkpoint, --checkpoint-every, --loglik-every, --patience, --max-seconds, --align-to)
    come from it unless given.

    Examples:

    \b
        ldacli train docword.kos.txt.gz -k 20 --iterations 500 --seed 1 -o kos.npz
        ldacli train docword.20ng.txt.gz -k 1000 --sampler sparse --threads 2 -o 20ng.npz
        ldacli train notes.txt --min-df 5 --max-df 0.5 -k 50 -o notes.npz \\
            --checkpoint notes.ckpt.npz --checkpoint-every 100
        ldacli train notes.txt -o notes.npz --resume notes.ckpt.npz
        ldacli train docword.kos.txt.gz -k 20 --method vem --seed 1 -o kos-vem.npz
        ldacli train docword.kos.txt.gz -k 20 --method gibbs --iterations 500 --burn-in 200 -o kos-gibbs.npz
        ldacli train docword.20ng.txt.gz --stop-words boilerplate.txt --remove-top 20 -k 50 -o 20ng.npz
        ldacli train today.ldac --warm-start yesterday.npz --iterations 100 -o today.npz --skip-unchanged
        ldacli train /shared/20ng-shards -k 100 --scheduler tcp://scheduler:8786 -o 20ng.npz
    """
    progress = setup_logging(values)
    output, resume, checkpoint = values["output"], values["resume"], values["checkpoint"]
    check_outputs({"-o/--output": (output, SUFFIXES["model"]), "--checkpoint": (checkpoint, SUFFIXES["checkpoint"])},
                  {"CORPUS": corpus, "--vocab": values["vocab"], "--resume": None if checkpoint == resume else resume,
                   "--warm-start": values["warm_start"], "--align-to": values["align_to"]})
    if values["skip_unchanged"] and resume:
        raise click.BadParameter("a resumed run continues where it stopped: there is nothing to compare",
                                 param_hint="--skip-unchanged")
    given = given_of(values, TRAIN, method_settings())
    with user_errors(ctx):  # before anything is read
        check_given(given)
        for s in READING:
            s.check(values[s.name])
    with user_errors(ctx), tls_options(values["scheduler"], values), \
            locked([output], wait=values["wait"]) as removed:
        for path in removed:
            tell(values, f"{path}: removed, a temporary file left by a run that was killed")
        reading = given_of(values, READING)
        if resume:  # the corpus is read as the checkpoint's run read it
            reading = resumed_reading(reading, resume)
        if values["scheduler"] and is_shard_folder(corpus):  # the workers read the files, the client the index
            if any(reading.get(s.name) not in (None, s.default) for s in READING if s is not INPUT_FORMAT):
                raise click.BadParameter("a shard folder on a cluster is trained as written: choose the vocabulary "
                                         "when converting", param_hint="--vocab/--stop-words/--remove-top/--min-df/"
                                                                       "--max-df/--max-vocab")
            data = open_shard_folder(corpus)
            tell(values, f"{corpus}: the workers read its {data.n_shards} shard files")
        else:
            data = read(corpus, {**values, **reading})
        tell(values, f"{corpus}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens")
        if values["skip_unchanged"] and unchanged(output, data, **given):
            tell(values, f"{output}: up to date (trained with these settings on this corpus); nothing to do")
            return
        t0 = time.perf_counter()
        if isinstance(data, Corpus):
            # the words that never occur leave here, not in the copy training would make while
            # this corpus is held: the sampler then keeps the tokens of this very corpus, which
            # holds them instead of its counts (Corpus.as_tokens), and the process holds them once
            data, _ = data.without_unused_words()
        model = run_train(data, progress=progress, output=output, **given)
        seconds = time.perf_counter() - t0
    p = model.params
    unit = METHODS[p["method"]].unit
    ll = model.loglik_per_token[-1] if model.loglik_per_token.size else float("nan")
    why = "" if p["stopped"] == "iterations" else f" ({p['stopped']})"
    tell(values, f"{output}: {model.n_topics} topics after {p['iterations_done']} {unit}s{why} in {seconds:.1f} s, "
                  f"{METHODS[p['method']].trace_label} {ll:.4f}, seed {p['seed']}")


# --- topics -------------------------------------------------------------------------------------------

@click.command(cls=Command)
@taking_former_spellings("topics")
@click.argument("model")
@declared((TOPICS_OUT, TOPICS_FORMAT, TOP_WORDS, MEASURE, DIAGNOSTICS, REFERENCE, INPUT_FORMAT, VOCAB, QUIET, VERBOSE))
@click.pass_context
def topics(ctx, model, **values):
    """Show the most probable words of each topic of MODEL, optionally with coherence and
    diagnostics.

    With --coherence, each topic gets a score computed from document co-occurrence counts of
    its --top-words most probable words in the reference corpus (--corpus, by default the
    training corpus), and the mean over topics is printed last (text), to stderr (tsv) or under
    "coherence" (json). With --diagnostics, each topic gets MALLET's diagnostics and ours against
    the reference corpus and the flags that mark it as likely junk, each with its reason (text:
    a line under the topic and the reasons last; tsv: columns; json: "diagnostics" and "flags"
    per topic). Learned (asymmetric) priors are shown beside each topic.

    Examples:

    \b
        ldacli topics kos.npz
        ldacli topics kos.npz -n 20 --format tsv -o topics.tsv
        ldacli topics kos.npz --format json | jq '.topics[0]'
        ldacli topics kos.npz --coherence npmi
        ldacli topics kos.npz --coherence umass -n 20 --corpus wiki.ldac
        ldacli topics kos.npz --diagnostics
        ldacli topics kos.npz --diagnostics --format json | jq '.topics[] | select(.flags != []) | .topic'
    """
    setup_logging(values)
    check_outputs({"-o/--output": (values["output"], ())}, {"MODEL": model, "--corpus": values["corpus"]})
    fmt, n, measure, diagnosing = (value(values, TOPICS_FORMAT), value(values, TOP_WORDS), values["coherence"],
                                   values["diagnostics"])
    if measure is None and not diagnosing:
        for s in (REFERENCE, INPUT_FORMAT, VOCAB):
            if values[s.name] is not None:
                raise click.BadParameter("applies with --coherence or --diagnostics only", param_hint=s.option)
    if (measure is not None or diagnosing) and n < 2:
        raise click.BadParameter(f"--{'coherence' if measure else 'diagnostics'} scores pairs of top words: expected "
                                 f"at least 2, found {n}", param_hint=TOP_WORDS.option)
    with user_errors(ctx):
        m = Model.load(model, documents=diagnosing)  # the training documents' proportions, for diagnostics only
        scores = diagnostics = None
        if measure is not None or diagnosing:
            if values["corpus"] is None:
                ref = training_reference(m)
                ref_name = m.params.get("corpus_source", "")
            else:
                ref = read(values["corpus"], values, model=m)
                ref_name = values["corpus"]
            if measure is not None:
                scores = topic_coherence(m, ref, measure=measure, top_words=n)
                scores["reference"] = ref_name
            if diagnosing:
                diagnostics = diagnose(m, ref, top_words=n)
        tops = m.top_words(n)
        emit(values, _topic_lines(model, m, tops, scores, fmt, measure, values, diagnostics))


def _topic_lines(path, m, tops, scores, fmt, measure, values, diagnostics=None):
    asymmetric = not np.all(m.alpha == m.alpha[0])  # then each topic's alpha is worth showing
    names = m.topic_names
    named = any(n is not None for n in names)
    diagnosed = diagnostics["topics"] if diagnostics else None
    if fmt == "json":
        def words(k, words):
            if diagnosed is None:
                return [{"word": w, "probability": p} for w, p in words]
            return [{"word": w, "probability": p, **{f: d[f] for f in WORD_FIELDS if f not in ("rank", "word", "prob")}}
                    for (w, p), d in zip(words, diagnosed[k]["words"])]

        out = {"model": path, "topics": [
            {"topic": k, "name": names[k], "alpha": float(m.alpha[k]),
             **({"coherence": scores["per_topic"][k]} if scores else {}),
             **({"diagnostics": {f: diagnosed[k][f] for f in FIELD_NAMES}, "flags": diagnosed[k]["flags"]}
                if diagnosed else {}),
             "words": words(k, ws)}
            for k, ws in enumerate(tops)]}
        if scores:
            out["coherence"] = {key: scores[key] for key in
                                ("measure", "top_words", "epsilon", "mean", "reference", "reference_docs")}
        if diagnostics:
            out["diagnostics"] = {"corpus": diagnostics["corpus"], "top_words": diagnostics["top_words"],
                                  "flags": diagnostics["flags"], "thresholds": THRESHOLDS}
        yield json_text(out, indent=2)
    elif fmt == "tsv":
        def row(fields):
            return delimited_line(map(str, fields), "\t")

        yield row(["topic", "rank", "word", "probability"] + ([measure] if scores else []) + (["name"] if named else [])
                  + (list(FIELD_NAMES) + ["flags"] if diagnosed else []))
        for k, words in enumerate(tops):
            extra = [f"{scores['per_topic'][k]:.6g}"] if scores else []
            extra += [names[k] or ""] if named else []
            if diagnosed:
                extra += [text_cell(diagnosed[k][f], kind) for f, kind, _, _ in DIAGNOSTIC_FIELDS]
                extra.append(" ".join(diagnosed[k]["flags"]))
            for r, (w, p) in enumerate(words, 1):
                yield row([k, r, w, f"{p:.6g}"] + extra)
        if scores:
            tell(values, f"mean {measure} coherence {scores['mean']:.6g} (top {scores['top_words']} words, "
                          f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} reference documents)")
        if diagnostics:
            tell(values, _flag_summary(diagnostics))
    else:
        width = len(str(len(tops) - 1))
        for k, words in enumerate(tops):
            label = f"topic {k:>{width}}" + (f" {names[k]}" if names[k] else "")
            if asymmetric:
                label += f" (alpha {m.alpha[k]:.4g})"
            if scores:
                label += f" [{measure} {scores['per_topic'][k]:.4g}]"
            if diagnosed and diagnosed[k]["flags"]:
                label += f" [junk? {', '.join(diagnosed[k]['flags'])}]"
            yield printable(f"{label}: " + "  ".join(f"{w} ({p:.3f})" for w, p in words))
            if diagnosed:
                yield " " * (width + 8) + "  ".join(f"{f} {_short(diagnosed[k][f])}" for f in FIELD_NAMES)
        if scores:
            yield printable(f"mean {measure} coherence: {scores['mean']:.6g} (top {scores['top_words']} words, "
                            f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} documents of "
                            f"{scores['reference']})")
        if diagnostics:
            yield printable(_flag_summary(diagnostics))
            raised = {f for t in diagnosed for f in t["flags"]}
            for flag in diagnostics["flags"]:
                if flag["name"] in raised:
                    yield printable(f"  {flag['name']}: {flag['meaning']}")


def _short(x) -> str:
    """A diagnostic as text: 4 significant digits, whole numbers without decimals, '-' for none."""
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer() or abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def _flag_summary(diagnostics: dict) -> str:
    """``flagged 3 of 50 topics as likely junk: 7 (boilerplate), ...`` (diagnostics of a corpus)."""
    topics = diagnostics["topics"]
    flagged = [t for t in topics if t["flags"]]
    corpus = diagnostics["corpus"]
    where = f" (against {corpus['source']}, {corpus['n_docs']:,} documents)" if corpus else ""
    if not flagged:
        return f"flagged none of {len(topics)} topics as likely junk{where}"
    return (f"flagged {len(flagged)} of {len(topics)} topics as likely junk{where}: "
            + ", ".join(f"{t['topic']} ({' '.join(t['flags'])})" for t in flagged))


# --- infer and perplexity -----------------------------------------------------------------------------

@click.command(cls=Command)
@taking_former_spellings("infer")
@click.argument("model")
@click.argument("corpus")
@declared((THETA_OUT, THETA_FORMAT), SPARSE, INFER, TLS, READING_FOR_MODEL, (QUIET, VERBOSE))
@click.pass_context
def infer(ctx, model, corpus, **values):
    """Infer topic proportions of the documents in CORPUS under MODEL.

    Text is tokenized as the model's training corpus was, and words are matched to the model's
    vocabulary by string. The tokens of words its vocabulary rules removed (stop words,
    pruning) and of words it has never seen are left out, and counted apart on stderr and in
    the .npz's params (removed_tokens, unknown_tokens). The output's format is --format, or else
    follows -o's ending; -o - writes tsv (or --format) to stdout. Documents are read, inferred
    and written a block at a time, so memory does not grow with their number (UCI files: their
    docIDs must not go down; Matrix Market and scipy .npz are read whole).

    Examples:

    \b
        ldacli infer kos.npz new_docs.txt -o theta.tsv
        ldacli infer kos.npz docword.new.txt.gz --vocab vocab.new.txt -o theta.npz --seed 3
        ldacli infer kos.npz new_docs.txt -o - --format csv | head
        ldacli infer kos.npz huge.txt.gz --top-topics 3 --min-proportion 0.05 -o theta.parquet
        ldacli infer kos.npz new_docs.txt --format mallet -o doc-topics.txt
        zcat huge.txt.gz | ldacli infer kos.npz - -o - --format jsonl | gzip > theta.jsonl.gz
    """
    progress = setup_logging(values)
    output, fmt = values["output"], values["output_format"]
    if fmt is None:
        fmt = "tsv" if output == "-" else os.path.splitext(output)[1].lower().lstrip(".")
    if fmt not in THETA_FORMATS:
        raise click.BadParameter(f"expected a file name ending in .tsv, .csv, .jsonl, .parquet or .npz, or --format, "
                                 f"found {output!r}", param_hint="-o/--output")
    if fmt == "npz" and output == "-":
        raise click.BadParameter("npz is a binary archive: write it to a file", param_hint="--format")
    ending = os.path.splitext(output)[1].lower().lstrip(".")
    if ending in THETA_FORMATS and ending != fmt and (fmt, ending) != ("mallet", "tsv"):  # -o theta.tsv --format csv
        raise click.BadParameter(f"expected a file name ending in .{'txt' if fmt == 'mallet' else fmt} for --format "
                                 f"{fmt}, found {output!r}", param_hint="-o/--output")
    check_outputs({"-o/--output": (output, ())}, {"MODEL": model, "CORPUS": corpus, "--vocab": values["vocab"]})
    with user_errors(ctx):  # before anything is read
        inference.check_settings(given_of(values, INFER))
        inference.check_table(fmt, **given_of(values, SPARSE))
        if output == "-":
            check_stream(fmt, sys.stdout.buffer)
    with user_errors(ctx), tls_options(values["scheduler"], values), locked([output if output != "-" else None]):
        m = Model.load(model, documents=False)
        stream = stream_read(corpus, values, m, fingerprint=fmt == "npz",
                             temp_folder=None if output == "-" else os.path.dirname(os.path.abspath(output)))
        write_inference(m, stream, output, fmt, out=sys.stdout.buffer if output == "-" else None,
                        progress=progress, **given_of(values, INFER, SPARSE))
        for note in stream.notes:
            tell(values, f"{corpus}: {note}")


def stream_read(path: str, values: dict, model: Model, **options):
    """:func:`read`, as a stream of blocks of documents for ``model`` (notes at the end)."""
    reading = reading_of(values)
    fmt = reading.pop("input_format", "auto")
    return stream_corpus(path, format=fmt, **model.reading(), **reading, **options)


@click.command(cls=Command)
@taking_former_spellings("perplexity")
@click.argument("model")
@click.argument("corpus")
@declared((TEXT_OR_JSON,), PERPLEXITY, TLS, READING_FOR_MODEL, (QUIET, VERBOSE))
@click.pass_context
def perplexity(ctx, model, corpus, **values):
    """Held-out log-likelihood and per-word perplexity of CORPUS under MODEL.

    \b
    - --estimator completion (default): each document's tokens (in word-id order) alternate
      between an observed half, from which theta is estimated with the topics fixed, and a
      scored half. Standard error: batch means over the averaged sweeps.
    - --estimator left-to-right: p(w_d) by the left-to-right particle estimator (Wallach et al.
      2009) over ALL tokens of each document, taken in a random order drawn from --seed,
      by 10 independent particle filters (unbiased for p(w_d), linear in document length);
      --resample for the original algorithm (quadratic). Standard error: across filters
      (particles), combined over documents. On long documents the log-estimate rises with
      --particles until it settles: compare two values.
    - --estimator importance: p(w_d) = mean over --samples draws theta ~ Dir(alpha) of
      p(w_d | theta), ALL tokens scored; unbiased but very noisy on long documents.

    Every output names the estimator, the natural-log log-likelihood with its standard
    error, the documents and tokens scored, and perplexity = exp(-log_likelihood / tokens).

    Examples:

    \b
        ldacli perplexity kos.npz heldout.ldac
        ldacli perplexity kos.npz heldout.ldac --seed 1 --format json
        ldacli perplexity kos.npz heldout.ldac --estimator left-to-right --particles 20 --seed 1
        ldacli perplexity kos.npz heldout.ldac --estimator importance --samples 10000
    """
    progress = setup_logging(values)
    with user_errors(ctx), tls_options(values["scheduler"], values):
        given = given_of(values, PERPLEXITY)
        streaming = evaluate.check_settings(given)["estimator"] == "completion"
        m = Model.load(model, documents=False)
        if streaming:  # documents read, inferred and scored a block at a time
            data = stream_read(corpus, values, m)
            result = perplexity_stream(m, data, progress=progress, **{k: v for k, v in given.items() if k != "estimator"})
            for note in data.notes:
                tell(values, f"{corpus}: {note}")
        else:
            data = read(corpus, values, model=m)
            result = compute_perplexity(m, data, progress=progress, **given)
    result = {"model": model, "corpus": corpus, **result, "notes": list(data.notes)}
    if value(values, TEXT_OR_JSON) == "json":
        click.echo(json_text(result, indent=2))
        return
    estimator = result["estimator"]
    if estimator == "document-completion":
        how = "theta from half of each document, the other half scored"
        se_how = f"batch means over {result['batches']} blocks of sweeps"
    elif estimator == "left-to-right":
        if result["resample"]:
            how = f"{result['particles']} particles re-drawing earlier topics (quadratic), all tokens scored"
            se_how = "across particles"
        else:
            how = f"{result['filters']} particle filters of {result['particles']} particles, all tokens scored"
            se_how = "across filters"
    else:
        how = f"{result['samples']} samples of theta from the prior, all tokens scored"
        se_how = "across samples"
    echo(f"estimator:       {estimator} ({how})")
    echo(f"documents:       {result['n_docs']}")
    echo(f"tokens scored:   {result['n_tokens']}")
    echo(f"unknown tokens:  {result['unknown_tokens']} (of words the model has never seen, left out)")
    echo(f"removed tokens:  {result['removed_tokens']} (of words its vocabulary rules remove, left out)")
    echo(f"log-likelihood:  {result['log_likelihood']:.6g} (natural log)")
    echo(f"standard error:  {result['standard_error']:.3g} ({se_how})")
    echo(f"perplexity:      {result['perplexity']:.6g}")
    echo(f"seed:            {result['seed']}")


# --- diff, info, report ---------------------------------------------------------------------------------

# Exit code of `diff --max-drift` when a paired topic moved further than allowed: the command
# succeeded, but something needs a look.


@click.command(cls=Command)
@taking_former_spellings("diff")
@click.argument("model_a")
@click.argument("model_b")
@declared((DIFF_OUT, TEXT_OR_JSON, TOP_WORDS, THRESHOLD, MAX_DRIFT, QUIET, VERBOSE))
@click.pass_context
def diff(ctx, model_a, model_b, **values):
    """Compare the topics of MODEL_A (say, yesterday's) and MODEL_B (today's).

    Topics are matched one to one by the Hungarian algorithm on the Jensen-Shannon distance
    between their word distributions (words matched by string, so the vocabularies may
    differ). For each pair: the distance, the top words gained and lost, and the prevalence
    (mean topic proportion) in each; then the topics with no counterpart. When MODEL_B was
    warm-started from MODEL_A's file, each of its topics is paired with the topic it continues
    instead, and the topics --add-topics added and --remove-topics removed are listed as such:
    never paired, never drift. --max-drift D exits 3 when a paired topic moved further than D.

    Examples:

    \b
        ldacli diff yesterday.npz today.npz
        ldacli diff yesterday.npz today.npz --format json | jq .max_distance
        ldacli diff yesterday.npz today.npz -o diff.txt
        ldacli diff yesterday.npz today.npz --max-drift 0.6 || echo "topics moved" | mail -s ldacli me
    """
    setup_logging(values)
    max_drift, output = values["max_drift"], values["output"] or "-"
    check_outputs({"-o/--output": (output, ())}, {"MODEL_A": model_a, "MODEL_B": model_b})
    with user_errors(ctx):
        max_drift = MAX_DRIFT.check(max_drift)
        a, b = Model.load(model_a), Model.load(model_b)
        result = diff_models(a, b, **given_of(values, (TOP_WORDS, THRESHOLD)), a_sha256=file_sha256(model_a))
    result = {"a": model_a, "b": model_b, **result}
    moved = drifted(result, max_drift)
    lines: list[str] = []  # written to -o at the end

    def line(text: str) -> None:
        lines.append(printable(text))

    if value(values, TEXT_OR_JSON) == "json":
        lines.append(json_text({**result, "max_drift": max_drift, "drifted": [[t["a"], t["b"]] for t in moved]},
                               indent=2))
    else:
        line(f"A: {model_a} ({a.n_topics} topics)    B: {model_b} ({b.n_topics} topics)")
        if result["pairing"] == "descent":
            how = "updated from A (a night's documents added)" if isinstance(b.params.get("update"), dict) \
                else "warm-started from A"
            line(f"B was {how}: each topic of B is paired with the topic of A it continues")
        line(f"matched {sum(t['matched'] for t in result['topics'])}, renumbered {result['renumbered']}, "
                   f"JS distance median {result['median_distance']:.3f}, max {result['max_distance']:.3f}")
        n = result["top_words"]
        for t in result["topics"]:
            mark = "" if t["matched"] else "  (no counterpart)"
            line(f"A {_named(t['a'], t['name_a']):>3} ~ B {_named(t['b'], t['name_b']):<3} JS "
                       f"{t['distance']:.3f}, {t['overlap']}/{n} top words shared, prevalence "
                       f"{100 * t['prevalence_a']:.1f}% -> {100 * t['prevalence_b']:.1f}%{mark}: "
                       + " ".join(t["top_words_b"][:8]))
            if t["gained"] or t["lost"]:
                line(f"        + {' '.join(t['gained']) or '-'}    - {' '.join(t['lost']) or '-'}")
        tops_a, tops_b = a.top_words(8), b.top_words(8)
        updated = isinstance(b.params.get("update"), dict)  # (an update's freed topics: removed and added)
        why_removed = "merged, its id freed for the night" if updated else "--remove-topics"
        why_added = "a new theme of the night" if updated else "--add-topics"
        for k in result["removed"]:
            line(f"A {a.topic_label(k):>3} removed ({why_removed}): " + " ".join(w for w, _ in tops_a[k]))
        for k in result["added"]:
            line(f"B {b.topic_label(k):>3} added ({why_added}): " + " ".join(w for w, _ in tops_b[k]))
        for side, m in (("a", a), ("b", b)):
            if result[f"only_in_{side}"]:
                line(f"only in {side.upper()}: topics "
                           + ", ".join(m.topic_label(k) for k in result[f"only_in_{side}"]))
    with user_errors(ctx), locked([output if output != "-" else None]):
        emit(values, lines)
    if moved:
        worst = max(moved, key=lambda t: t["distance"])
        tell(values, f"drift: {len(moved)} topic{'s' if len(moved) != 1 else ''} moved further than {max_drift:g} "
                      f"(worst: A {worst['a']} ~ "
                      f"B {worst['b']}, {worst['distance']:.3f})")
        sys.exit(EXIT_DRIFT)


def _named(k: int, name: str | None) -> str:
    return f"{k} ({name})" if name else str(k)


@click.command(cls=Command)
@taking_former_spellings("info")
@click.argument("model")
@declared((TEXT_OR_JSON, QUIET, VERBOSE))
@click.pass_context
def info(ctx, model, **values):
    """Describe a model (or checkpoint) file: parameters, sizes, priors, provenance, trace.

    Shows the method and its settings, K, V, D and N, the priors (alpha per topic, listed when
    there are few topics and summarised otherwise; beta) and whether they were learned or set,
    the seed, version and training corpus (format, fingerprint), and the log-likelihood trace
    summarised (first, last and best point). A checkpoint also shows the sweeps done. The files
    the model records (corpus, warm start, ...) are shown by their names, without their folders;
    --format json gives the paths as recorded.

    Examples:

    \b
        ldacli info kos.npz
        ldacli info kos.npz --format json | jq .priors.alpha.sum
        ldacli info run.ckpt.npz
    """
    setup_logging(values)
    with user_errors(ctx):
        summary = describe_file(model)
    if value(values, TEXT_OR_JSON) == "json":
        click.echo(json_text(summary, indent=2))
    else:
        for line in format_info(summary):
            echo(line)


@click.command(cls=Command)
@taking_former_spellings("report")
@click.argument("model")
@declared((REPORT_OUT, REFERENCE, INPUT_FORMAT, VOCAB), REPORT, (QUIET, VERBOSE))
@click.pass_context
def report(ctx, model, **values):
    """Write a self-contained, interactive HTML report of MODEL that works offline: a topic map,
    each topic's words ranked by relevance with a lambda control, the model at a glance (priors,
    trace, why training stopped), coherence and representative documents, and a diff against an
    older model. Needs the report extra: pip install 'ldacli[report]'.

    Examples:

    \b
        ldacli report kos.npz -o kos.html
        ldacli report today.npz -o today.html --diff yesterday.npz --png
        ldacli report kos.npz -o kos.html --corpus heldout.ldac
    """
    setup_logging(values)
    output, corpus = values["output"], values["corpus"]
    check_outputs({"-o/--output": (output, SUFFIXES["report"])},
                  {"MODEL": model, "--corpus": corpus, "--diff": values["diff"]})
    if corpus is None:
        for s in (INPUT_FORMAT, VOCAB):
            if values[s.name] is not None:
                raise click.BadParameter("applies with --corpus only", param_hint=s.option)
    with user_errors(ctx), locked([output]):
        m = Model.load(model)
        if corpus is not None:
            reference = read(corpus, values, model=m)
        else:
            try:
                reference = training_reference(m, "--corpus")
            except LdacliError as exc:
                tell(values, f"{model}: no coherence or documents in the report: {exc}")
                reference = None
        t0 = time.perf_counter()
        written = write_report(model, output, corpus=reference, **given_of(values, REPORT))
    tell(values, f"{output}: report of {model}, {written['bytes'] / 1e6:.1f} MB, in {time.perf_counter() - t0:.1f} s"
                  + (f"; images {', '.join(written['images'])}" if written["images"] else ""))


# --- history and trends -------------------------------------------------------------------------------

OVER_TIME_OUT = output_setting("Where to write the result, in --format or by its ending", ("any name",), stdout=True,
                               required=False)
OVER_TIME_FORMAT = format_setting(over_time.FORMATS, "Output format: text for people, json (everything), a table "
                                                     "(tsv, csv, jsonl, parquet) or html (the page; the report extra).",
                                  default_help="by -o's ending: .json .tsv .csv .jsonl .parquet .html; text for -o -")


def _over_time_format(output: str, given: str | None) -> str:
    """The format of history's and trends' output: ``--format``, or by -o's ending (text for
    stdout and other endings); an ending that names another format is refused."""
    ending = over_time.ENDINGS.get(os.path.splitext(output)[1].lower()) if output != "-" else None
    if given is not None and ending is not None and ending != given:
        raise click.BadParameter(f"expected a file name ending in .{given} for --format {given}, found {output!r}",
                                 param_hint="-o/--output")
    return given or ending or "text"


@click.command(cls=Command)
@click.argument("models", nargs=-1, required=True)
@declared((OVER_TIME_OUT, OVER_TIME_FORMAT), topic_history.SETTINGS, (MAX_DRIFT, QUIET, VERBOSE))
@click.pass_context
def history(ctx, models, **values):
    """Follow each topic across the MODELS of a schedule of retrains: its share, id, name, top
    words and drift (Jensen-Shannon distance, as diff measures it) in each model, and when it
    was born (--add-topics, or nothing like it before) and died (--remove-topics, or nothing like
    it after).

    MODELS are model files, folders of them, or glob patterns ('models/*.npz'). They are read one
    at a time, in the order of their lineage (a model after the one it was warm-started from or
    aligned to; else by modification time) or as given (--order given), and each is paired with
    the one before: by the descent a warm start records, by id after --align-to, else by diff's
    matching (said in the output). --max-drift D exits 3 naming the topics and steps that moved
    further than D.

    Examples:

    \b
        ldacli history models/
        ldacli history 'models/model-*.npz' -o history.html
        ldacli history models/ --format tsv -o history.tsv
        ldacli history yesterday.npz today.npz --max-drift 0.6 || echo "exit $?: topics moved"
    """
    setup_logging(values)
    output = values["output"] or "-"
    fmt = _over_time_format(output, values["output_format"])
    with user_errors(ctx):  # a folder's and a pattern's files, each an input the output must not be
        found = topic_history.model_files(list(models))
    check_outputs({"-o/--output": (output, ())}, {"MODELS": found.paths})
    with user_errors(ctx):  # before any model is read
        max_drift = MAX_DRIFT.check(values["max_drift"])
        given = given_of(values, topic_history.SETTINGS)
        for s in topic_history.SETTINGS:
            s.check(given.get(s.name))
        if fmt == "html":
            over_time.needs_the_report_extra("ldacli history")
    with user_errors(ctx), locked([output if output != "-" else None]):
        result = topic_history.read_history(found, **given,
                                            progress=lambda path: logging.getLogger("ldacli").info("reading %s", path))
        for note in result["notes"]:
            tell(values, topic_history.printable(note))
        with results_to(output, binary=True) as out:
            over_time.write_history(result, out, fmt)
    moved = topic_history.drifted(result, max_drift)
    if moved:
        worst = max(moved, key=lambda m: m["drift"])
        tell(values, f"drift: {len(moved)} move(s) further than {max_drift:g}: "
                      + "; ".join(f"topic {m['topic']} at step {m['step']} ({m['drift']:.3f}"
                                  + (f", became topic {m['became']}" if m["became"] is not None else "") + ")"
                                  for m in moved[:10]) + ("; ..." if len(moved) > 10 else "")
                      + f" (worst: topic {worst['topic']}, step {worst['step']})")
        sys.exit(EXIT_DRIFT)


@click.command(cls=Command)
@click.argument("model")
@declared((OVER_TIME_OUT, OVER_TIME_FORMAT, topic_trends.DATES), topic_trends.SETTINGS,
          (topic_trends.APPEND, QUIET, VERBOSE))
@click.pass_context
def trends(ctx, model, **values):
    """Each topic's share of the documents by period of their dates: for every period (--by
    day, week, month, quarter or year) and topic, the number of documents, the mean of the
    topic's proportion over them and its standard error.

    MODEL is a model (its training documents) or an inference file (ldacli infer MODEL NEW -o
    FILE.npz: new documents, measured by the model without retraining). --dates FILE gives one
    ISO 8601 date per document, a line each in the corpus's order, or ID<TAB>DATE lines (CSV
    in a .csv file) keyed by document id. --append merges the result into the table -o names
    (tsv, csv, jsonl, parquet), as a nightly job does with the day's new documents.

    Examples:

    \b
        ldacli trends model.npz --dates dates.txt --by month
        ldacli trends model.npz --dates ids-dates.tsv --by week -o trends.html
        ldacli infer model.npz today.txt -o today.npz && \\
            ldacli trends today.npz --dates today-dates.txt --by day -o shares.tsv --append
    """
    setup_logging(values)
    output = values["output"] or "-"
    fmt = _over_time_format(output, values["output_format"])
    check_outputs({"-o/--output": (output, ())}, {"MODEL": model, "--dates": values["dates"]})
    with user_errors(ctx):
        by = topic_trends.BY.check(values["by"]) if values["by"] is not None else topic_trends.BY.default
        if values["append"] and (output == "-" or fmt not in TABLE_FORMATS):
            raise SettingError("append", "append merges into a table file: give -o FILE.tsv (or .csv, .jsonl, "
                                         ".parquet)", ("output",))
        if fmt == "html":
            over_time.needs_the_report_extra("ldacli trends")
    with user_errors(ctx), locked([output if output != "-" else None]):
        props, days, shares, notes = topic_trends.measure(model, values["dates"], by)
        for note in notes:
            tell(values, topic_history.printable(note))
        if values["append"] and os.path.exists(output):
            table, added, merged = topic_trends.merge_tables(output, topic_trends.read_table(output, fmt),
                                                             topic_trends.shares_table(shares, props.names), by)
            with results_to(output, binary=True) as out:
                write_table(table, out, fmt)
            tell(values, f"{output}: {len(added)} period(s) added ({', '.join(added[:5]) or 'none'}), "
                          f"{len(merged)} merged with its rows ({', '.join(merged[:5]) or 'none'})")
            return
        with results_to(output, binary=True) as out:
            over_time.write_trends(props, days, shares, by, out, fmt)


# --- export -------------------------------------------------------------------------------------------

EXPORT_OUT = output_setting("Where to write the table", ("any name",), stdout=True, required=False)
EXPORT_FORMAT = format_setting(export_module.FORMATS,
                               "Output format: tsv, csv, jsonl or parquet (the table), mallet (MALLET's file for it), "
                               "json (pyldavis only).",
                               default_help="by -o's ending: .tsv .txt .csv .jsonl .ndjson .parquet .json; tsv for "
                                            "-o -; json for pyldavis")


@click.command(cls=Command)
@click.argument("model")
@click.argument("what", type=click.Choice(export_module.TABLES))
@declared((EXPORT_OUT, EXPORT_FORMAT), export_module.SETTINGS, (INPUT_FORMAT, VOCAB, QUIET, VERBOSE))
@click.pass_context
def export(ctx, model, what, **values):
    """Write WHAT of MODEL as a table for other tools, to -o FILE or stdout.

    WHAT:

    \b
        doc-topics   the training documents' topic proportions (or an inference file's, of
                     ldacli infer -o FILE.npz): doc_id, topic_0 ... topic_{K-1};
                     sparse with --min-proportion P and/or --top-topics N: doc_id, rank, topic,
                     proportion, largest first (MALLET's --doc-topics-threshold/--doc-topics-max)
        topic-words  topic, rank, word, probability: every word of every topic (the top -n
                     words of each with -n)
        topic-keys   topic, name, alpha, prevalence (mean proportion over the training documents),
                     the --coherence score when asked, and the top -n words (10)
        diagnostics  one row per topic: MALLET's diagnostics (tokens, document_entropy, umass,
                     exclusivity, rank_1_docs, allocation_ratio, ...), npmi and ours, the junk
                     flags and the top -n words (10), against --corpus (by default the training
                     corpus); --format mallet writes MALLET's --diagnostics-file XML
        pyldavis     the arguments of pyLDAvis.prepare as JSON (doc_lengths and term_frequency
                     from --corpus, by default the training corpus)

    --format tsv, csv (quoted where a field needs it), jsonl, parquet (pip install
    'ldacli[parquet]') or mallet: MALLET's --output-doc-topics, --output-topic-keys,
    --topic-word-weights-file and --diagnostics-file layouts. Document ids are the corpus's own.

    Examples:

    \b
        ldacli export kos.npz doc-topics -o theta.csv
        ldacli export kos.npz doc-topics --top-topics 3 --min-proportion 0.1 --format jsonl -o -
        ldacli export kos.npz topic-keys -n 20 --coherence npmi -o keys.tsv
        ldacli export kos.npz topic-words -o words.parquet
        ldacli export kos.npz diagnostics -o diagnostics.csv
        ldacli export kos.npz diagnostics --format mallet -o diagnostics.xml
        ldacli export kos.npz doc-topics --format mallet -o doc-topics.txt
        ldacli export new-theta.npz doc-topics -o new-theta.csv
        ldacli export kos.npz pyldavis -o kos-ldavis.json
    """
    setup_logging(values)
    output, corpus = values["output"] or "-", values["corpus"]
    check_outputs({"-o/--output": (output, ())}, {"MODEL": model, "--corpus": corpus, "--vocab": values["vocab"]})
    if corpus is None:
        for s in (INPUT_FORMAT, VOCAB):
            if values[s.name] is not None:
                raise click.BadParameter("applies with --corpus only", param_hint=s.option)
    with user_errors(ctx):
        given = given_of(values, export_module.SETTINGS)
        export_module.check_applies(what, given)
        fmt = export_module.format_for(what, output, values["output_format"])
        for s in export_module.SETTINGS:
            s.check(values[s.name])
        if output == "-":
            check_stream(fmt, sys.stdout.buffer)
    with user_errors(ctx), locked([output if output != "-" else None]):
        m = export_module.read_source(model, what)
        reference = read(corpus, values, model=m) if corpus is not None else None
        n = values["top_words"]
        with results_to(output, binary=True) as out:
            if what == "pyldavis":
                export_module.write_pyldavis(export_module.to_pyldavis(m, reference), out)
            else:
                scores = (export_module.keys_coherence(m, values["coherence"], reference, n) if what == "topic-keys"
                          else export_module.diagnostics(m, reference, n) if what == "diagnostics" else None)
                if fmt == "mallet":
                    write_lines(export_module.mallet_lines(
                        m, what, min_proportion=values["min_proportion"], top_topics=values["top_topics"], top_words=n,
                        scores=scores), out)
                else:
                    write_table(export_module.table(m, what, min_proportion=values["min_proportion"],
                                                    top_topics=values["top_topics"], top_words=n, scores=scores),
                                out, fmt)


# --- select-k -----------------------------------------------------------------------------------------

# Exit code of select-k when the data do not determine K: the command succeeded, but its
# table needs a look (as diff --max-drift's).

SELECT_K_OUT = Setting("output", Text(path=True), None,
                       "Folder for every pair's model and scores (k{K}-s{i}.npz, .json), the table (select-k.json, "
                       "select-k.tsv) and the page (select-k.html); created if missing. A run started again in it "
                       "trains only the pairs it lacks.", flags=("-o", "--output"), required=True)
SELECT_K_FORMAT = format_setting(("text", "tsv", "json"), "Output format of the table on stdout: text for people, "
                                                          "tsv (one row per K) or json (everything).")


@click.command("select-k", cls=Command)
@click.argument("corpus")
@declared((SELECT_K_OUT, SELECT_K_FORMAT), choosing.SETTINGS, choosing.SETTINGS_OF_TRAIN, TLS, READING,
          (QUIET, VERBOSE))
@click.pass_context
def select_k_command(ctx, corpus, **values):
    """Choose the number of topics: train every K of -k with --seeds seeds each (train's options
    for every run) on CORPUS less a held-out split, and report for each K, as mean ± standard
    error over the seeds: held-out perplexity (document completion, as ldacli perplexity), NPMI
    coherence on the training documents, topic diversity and exclusivity, and stability (how
    well the topics of different seeds match, as ldacli diff matches them).

    It recommends the K with the most topic quality (NPMI x diversity) per unit of held-out
    perplexity, or among the Ks within one standard error of it the most stable; when that K is
    the smallest or the largest tried, or every K is within one standard error of it, K is not
    determined: it says so, with the evidence, and exits with code 3. The rule is printed with
    the table. Every model is written to -o DIR with the table and a page (DIR/select-k.html).
    Killed (Ctrl-C, SIGTERM, kill -9, a reboot), the same command started again trains only the
    pairs it had not finished, and continues those under way from their checkpoints (written on
    Ctrl-C/SIGTERM, and every --checkpoint-every sweeps).

    Examples:

    \b
        ldacli select-k docword.kos.txt.gz -k 5,10,20,50 --seeds 3 --iterations 300 -o kos-k
        ldacli select-k docword.20ng.txt.gz -k 10:200:log8 --seed 1 --threads 2 -o 20ng-k --format tsv
        ldacli select-k notes.txt -k 10,20,40 --min-df 5 --scheduler tcp://scheduler:8786 -o notes-k
    """
    progress = setup_logging(values)
    output = values["output"]
    if os.path.exists(output) and not os.path.isdir(output):
        raise click.BadParameter(f"expected a folder, found the file {output!r}", param_hint="-o/--output")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise click.BadParameter(f"expected an existing folder this user may write in for {output!r}, found "
                                 f"{parent!r} missing or read-only", param_hint="-o/--output")
    own, given = given_of(values, choosing.SETTINGS), given_of(values, choosing.SETTINGS_OF_TRAIN)
    with user_errors(ctx):  # before anything is read
        checked = settings.resolve(choosing.SETTINGS, own)
        choosing.check_runs(given, (checked["n_topics"] or [1])[0], output)
        for s in READING:
            s.check(values[s.name])
    with user_errors(ctx), tls_options(values["scheduler"], values):
        data = read(corpus, values)
        tell(values, f"{corpus}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens")
        page = os.path.join(output, "select-k.html")
        try:
            import vl_convert  # noqa: F401 - the page's charts need it
            write_page = lambda result: write_select_k_page(result, page)  # noqa: E731
        except ImportError:
            write_page = None  # said at the end, even with -q, where it is seen
        result = choosing.select_k(data, own.pop("n_topics"), output=output, progress=progress, page=write_page,
                                   **own, **given)
    fmt = value(values, SELECT_K_FORMAT)
    if fmt == "json":
        click.echo(json_text(result, indent=2))
    elif fmt == "tsv":  # numbers only
        for line in choosing.table_tsv(result):
            click.echo(line)
    else:
        for line in choosing.table_text(result):
            echo(line)
    tell(values, f"{output}: {len(result['pairs'])} models, select-k.json, select-k.tsv"
                  + (", select-k.html" if write_page else ""))
    if not write_page:
        echo(f"Warning: {page} not written: the page's charts need the report extra, {REPORT_EXTRA}", err=True)
    if result["recommended"] is None:  # it ran, but a person has to look
        sys.exit(EXIT_UNDETERMINED)


# --- name ---------------------------------------------------------------------------------------------

@click.command("name", cls=Command)
@click.argument("model")
@click.argument("topic", type=int)
@click.argument("name")
@declared((settings.by_name(TRAIN)["wait"], QUIET, VERBOSE))
@click.pass_context
def name_command(ctx, model, topic, name, **values):
    """Name topic TOPIC of MODEL (an empty NAME removes its name). The file is rewritten
    atomically while holding its lock. Names appear wherever topic ids do (topics, diff, info,
    report), are kept by warm starts (--warm-start) and follow their topics when a model is
    aligned (--align-to); a topic takes its name from a --seed-words file too.

    Examples:

    \b
        ldacli name kos.npz 3 "iraq war"
        ldacli name kos.npz 3 ""
        ldacli topics kos.npz
    """
    setup_logging(values)
    with user_errors(ctx):
        m = name_topic(model, topic, name, wait=values["wait"])
    label = m.topic_names[topic]
    tell(values, f"{model}: topic {topic} " + (f"is named {label!r}" if label else "has no name"))


# --- convert ------------------------------------------------------------------------------------------

@click.command(cls=Command)
@taking_former_spellings("convert")
@click.argument("source")
@declared((CONVERT_OUT,), WRITING, READING, (QUIET, VERBOSE))
@click.pass_context
def convert(ctx, source, **values):
    """Turn a corpus (typically text) into a bag-of-words file plus a vocabulary file, or into
    a shard folder (--shards).

    The vocabulary rules (--stop-words, --remove-top, --min-df, --max-df, --max-vocab) apply to
    every input format. With --vocab, the vocabulary is fixed (words outside it are dropped),
    so several corpora can share one vocabulary.

    Examples:

    \b
        ldacli convert docs.txt --min-df 5 --max-df 0.5 -o docs.ldac
        ldacli convert new_docs.txt --vocab docs.vocab -o new_docs.ldac
        ldacli convert docs/ --to uci -o docword.docs.txt
        ldacli convert docword.20ng.txt.gz --stop-words boilerplate.txt -o 20ng.ldac
        ldacli convert docword.20ng.txt.gz --shards 16 -o /shared/20ng-shards
    """
    setup_logging(values)
    output = values["output"]
    if values["shards"] is not None:
        _convert_to_shards(ctx, source, values)
        return
    to = value(values, WRITING[0])
    vocab_out = values["vocab_out"] or default_vocab_path(output, to)
    check_outputs({"-o/--output": (output, ()), "--vocab-out": (vocab_out, ())},
                  {"SOURCE": source, "--vocab": values["vocab"]})
    with user_errors(ctx), locked([output, vocab_out]):
        data = read(source, values)
        write_corpus(data, output, vocab_out, format=to)
    tell(values, f"{output}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens; "
                  f"vocabulary in {vocab_out}")


def _convert_to_shards(ctx, source, values) -> None:
    output = values["output"]
    for s in WRITING[:2]:
        if values[s.name] is not None:
            raise click.BadParameter("a shard folder holds its own vocabulary and npz shard files", param_hint=s.option)
    parent = os.path.dirname(os.path.abspath(output))
    if os.path.lexists(output) and not is_shard_folder(output):
        raise click.BadParameter(f"{output!r} exists and is not a shard folder: refusing to replace it",
                                 param_hint="-o/--output")
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise click.BadParameter(f"expected an existing folder this user may write in for {output!r}, found "
                                 f"{parent!r} missing or read-only", param_hint="-o/--output")
    if same_file(output, source):
        raise click.BadParameter(f"{output!r} is the SOURCE input: refusing to write over it", param_hint="-o/--output")
    with user_errors(ctx), locked([output]):
        reading = reading_of(values)
        _, notes = split_corpus(source, output, values["shards"], format=reading.pop("input_format", "auto"),
                                **reading)
        for note in notes:
            tell(values, f"{source}: {note}")
        folder = open_shard_folder(output)
    tell(values, f"{output}: {folder.n_docs:,} documents, {folder.n_words:,} words, {folder.n_tokens:,} tokens in "
                  f"{folder.n_shards} shard files")


def default_vocab_path(output: str, out_format: str) -> str:
    """The vocabulary name the readers find on their own beside ``output``."""
    folder, name = os.path.split(output)
    if out_format == "uci" and name.startswith("docword."):
        stem = name[len("docword."):].removesuffix(".gz").removesuffix(".txt")
        return os.path.join(folder, f"vocab.{stem}.txt")
    stem = name.removesuffix(".gz")
    stem = os.path.splitext(stem)[0] if "." in stem else stem
    return os.path.join(folder, stem + ".vocab")
