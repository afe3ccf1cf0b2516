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

from ldacli import exporting
from ldacli import model_selection as choosing
from ldacli import settings
from ldacli.api_input import corpus_at
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
from ldacli.cli.results import diff_lines, perplexity_lines, topic_lines
from ldacli.cli.text import echo, emit, results_to, setup_logging, tell
from ldacli.cluster.connection import TLS, tls_options
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.read import (
    INPUT_FORMAT,
    READING,
    READING_FOR_MODEL,
    VOCAB,
)
from ldacli.corpora.formats.shards import ShardFolder, is_shard_folder, open_shard_folder
from ldacli.corpora.formats.tokenizer_file import tokenizer_file_path, tokenizer_record
from ldacli.corpora.formats.split import split_corpus
from ldacli.corpora.formats.write import WRITE_FORMATS, write_corpus
from ldacli.diff import MAX_DRIFT, THRESHOLD, diff_models, drifted
from ldacli.errors import SettingError
from ldacli.escaping import json_text
from ldacli.files.fileio import file_sha256
from ldacli.files.locking import locked
from ldacli.exporting import export as export_table
from ldacli.files.tables import (
    TABLE_FORMATS,
    write_table,
)
from ldacli.info import describe as describe_file
from ldacli.info import format_text as format_info
from ldacli.methods.driver import SETTINGS as TRAIN
from ldacli.methods.driver import NOTHING_TO_COMPARE, check_given, method_settings, plan_for, train_planned, \
    unchanged_plan
from ldacli.methods.registry import METHODS
from ldacli.model import TOP_WORDS, Model
from ldacli.over_time import history as topic_history
from ldacli.over_time import outputs as over_time
from ldacli.over_time import trends as topic_trends
from ldacli.pages.report import SETTINGS as REPORT
from ldacli.pages.report import write_report, write_select_k_page
from ldacli.pages.webpage import REPORT_EXTRA
from ldacli.scoring.coherence import MEASURE, REFERENCE
from ldacli.scoring.diagnostics import DIAGNOSTICS
from ldacli.scoring.inference import SETTINGS as INFER
from ldacli.scoring.topics import SETTINGS as TOPICS
from ldacli.scoring.topics import topic_summary
from ldacli.scoring.inference import SPARSE, write_inference
from ldacli.scoring.perplexity import SETTINGS as PERPLEXITY
from ldacli.scoring.perplexity import perplexity as compute_perplexity
from ldacli.settings import Choice, Integer, Setting, Text
from ldacli.topic_names import name_topic, seed_ranks

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
    """The corpus at ``path`` as the library reads it (:func:`ldacli.api_input.corpus_at`, with
    the reading settings given in ``values``, for ``model`` when one scores it); its notes go to
    stderr, each once."""
    corpus = corpus_at(path, given_of(values, READING), model=model)
    for note in corpus.notes:
        tell(values, f"{path}: {note}")
    return corpus


# --- train --------------------------------------------------------------------------------------------

def say_read(values: dict, path: str, data: Corpus | ShardFolder) -> None:
    """Say what ``train`` reads of the corpus at ``path`` (:func:`~ldacli.methods.driver.plan_for`'s
    ``on_read``): the corpus read (the reader's notes), or a shard folder's index (its files read
    by the cluster's workers, or streamed from disk), and its size."""
    if isinstance(data, ShardFolder):
        tell(values, f"{path}: the workers read its {data.n_shards} shard files" if values["scheduler"] else
             f"{path}: trained from disk, its {data.n_shards} shards streamed through each sweep (in memory the run "
             f"would need more than the memory limit)")
    else:
        for note in data.notes:
            tell(values, f"{path}: {note}")
    tell(values, f"{path}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens")


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
        raise click.BadParameter(NOTHING_TO_COMPARE, param_hint="--skip-unchanged")
    given = given_of(values, TRAIN, method_settings())
    with user_errors(ctx):  # before anything is read
        check_given(given)
        for s in READING:
            s.check(values[s.name])
    with user_errors(ctx), tls_options(values["scheduler"], values), \
            locked([output], wait=values["wait"]) as removed:
        for path in removed:
            tell(values, f"{path}: removed, a temporary file left by a run that was killed")
        plan = plan_for(corpus, given, given_of(values, READING), on_read=lambda data: say_read(values, corpus, data))
        if values["skip_unchanged"] and unchanged_plan(output, plan, any_seed=values["seed"] is None):
            tell(values, f"{output}: up to date (trained with these settings on this corpus); nothing to do")
            return
        t0 = time.perf_counter()
        model = train_planned(plan, progress=progress, output=output)
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
    the reference corpus: the flags that mark it as likely junk (verdicts backed on held-out
    corpora) and what else it measured that junk often does (measurements, not verdicts), each with
    its reason (text: a line under the topic and the reasons last; tsv: columns; json:
    "diagnostics", "flags" and "measured" per topic). Learned (asymmetric) priors are shown beside
    each topic, and a seeded topic none of whose seed words is among its 10 words of most tokens
    says it lost its seeds (text: beside its name; tsv: seeds_lost; json: "seeds", the seeds' ranks).

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
        shown = topic_summary(model, **given_of(values, TOPICS, (INPUT_FORMAT, VOCAB)))
        for note in shown["notes"]:
            tell(values, f"{values['corpus']}: {note}")
        emit(values, topic_lines(model, shown["model"], shown["top_words"], shown["coherence"], fmt, measure, values,
                                 shown["diagnostics"], {t["topic"]: t for t in seed_ranks(shown["model"])}))


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
    with user_errors(ctx), tls_options(values["scheduler"], values):
        written = write_inference(model, corpus, output, fmt, out=sys.stdout.buffer if output == "-" else None,
                                  progress=progress, **given_of(values, INFER, SPARSE, READING))
    for note in written.notes:
        tell(values, f"{corpus}: {note}")


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
        result = compute_perplexity(model, corpus, progress=progress, **given_of(values, PERPLEXITY, READING))
    for note in result["notes"]:
        tell(values, f"{corpus}: {note}")
    result = {"model": model, "corpus": corpus, **result}
    if value(values, TEXT_OR_JSON) == "json":
        click.echo(json_text(result, indent=2))
        return
    for line in perplexity_lines(result):
        echo(line)


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
    lines = diff_lines(result, a, b, value(values, TEXT_OR_JSON), max_drift, moved)
    with user_errors(ctx), locked([output if output != "-" else None]):
        emit(values, lines)
    if moved:
        worst = max(moved, key=lambda t: t["distance"])
        tell(values, f"drift: {len(moved)} topic{'s' if len(moved) != 1 else ''} moved further than {max_drift:g} "
                      f"(worst: A {worst['a']} ~ "
                      f"B {worst['b']}, {worst['distance']:.3f})")
        sys.exit(EXIT_DRIFT)


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
    t0 = time.perf_counter()
    with user_errors(ctx):
        written = write_report(model, output, corpus=corpus, **given_of(values, REPORT, (INPUT_FORMAT, VOCAB)))
    for note in written["notes"]:
        tell(values, note)
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
EXPORT_FORMAT = format_setting(exporting.FORMATS,
                               "Output format: tsv, csv, jsonl or parquet (the table), mallet (MALLET's file for it), "
                               "json (pyldavis only).",
                               default_help="by -o's ending: .tsv .txt .csv .jsonl .ndjson .parquet .json; tsv for "
                                            "-o -; json for pyldavis")


@click.command(cls=Command)
@click.argument("model")
@click.argument("what", type=click.Choice(exporting.TABLES))
@declared((EXPORT_OUT, EXPORT_FORMAT), exporting.SETTINGS, (INPUT_FORMAT, VOCAB, QUIET, VERBOSE))
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
        written = export_table(model, what, output, format=values["output_format"],
                               **given_of(values, exporting.SETTINGS, (INPUT_FORMAT, VOCAB)))
    for note in written["notes"]:
        tell(values, f"{corpus}: {note}")


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
    tokenized = f", how the text was tokenized in {tokenizer_file_path(output)}" if tokenizer_record(data) else ""
    tell(values, f"{output}: {data.n_docs:,} documents, {data.n_words:,} words, {data.n_tokens:,} tokens; "
                  f"vocabulary in {vocab_out}{tokenized}")


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
    tokenized = f", how the text was tokenized in {folder.reading['tokenizer_file']['path']}" if folder.reading else ""
    tell(values, f"{output}: {folder.n_docs:,} documents, {folder.n_words:,} words, {folder.n_tokens:,} tokens in "
                  f"{folder.n_shards} shard files{tokenized}")


def default_vocab_path(output: str, out_format: str) -> str:
    """The vocabulary name the readers find on their own beside ``output``."""
    folder, name = os.path.split(output)
    if out_format == "uci" and name.startswith("docword."):
        stem = name[len("docword."):].removesuffix(".gz").removesuffix(".txt")
        return os.path.join(folder, f"vocab.{stem}.txt")
    stem = name.removesuffix(".gz")
    stem = os.path.splitext(stem)[0] if "." in stem else stem
    return os.path.join(folder, stem + ".vocab")
