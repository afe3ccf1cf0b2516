"""The ``ldacli`` command line: a thin layer of click over the Python API.

stdout carries results only; notes, progress and errors go to stderr. Exit codes: 0 success,
1 for bad data and runtime errors, 2 for usage errors, 130 when stopped by SIGINT, 143 by SIGTERM.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from contextlib import contextmanager

import click
import numpy as np

from ldacli.version import __version__
from ldacli.formats.detect import FORMATS as CORPUS_FORMATS
from ldacli.formats.read import read_corpus
from ldacli.formats.write import WRITE_FORMATS, write_corpus, write_shards
from ldacli.errors import LdacliError, LockedError, SettingError
from ldacli.evaluate import DEFAULT_PARTICLES, DEFAULT_SAMPLES
from ldacli.evaluate import METHODS as EVAL_METHODS
from ldacli.evaluate import perplexity as compute_perplexity
from ldacli.fileio import file_sha256
from ldacli.heldout import DEFAULT_BURN_IN, DEFAULT_ITERATIONS
from ldacli.inference import infer as run_infer
from ldacli.info import describe as describe_file, format_text as format_info
from ldacli.locking import EXIT_LOCKED, locked
from ldacli.diff import DEFAULT_TOP, DEFAULT_UNMATCHED, align, diff_models
from ldacli.methods.driver import (DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD, DEFAULT_TOPICS, METHODS,
                                   TrainingInterrupted, train as run_train, unchanged)
from ldacli.methods.distributed import cluster
from ldacli.methods.sharded import SAMPLERS
from ldacli.model import Model
from ldacli.formats.shards import is_shard_folder, open_shard_folder
from ldacli.report import write_report
from ldacli.topic_coherence import DEFAULT_TOP_N, MEASURES as COHERENCE_MEASURES
from ldacli.topic_coherence import coherence as topic_coherence, training_reference

FORMATS = click.Choice(list(CORPUS_FORMATS))


@contextmanager
def user_errors(ctx: click.Context | None = None):
    """Report users' mistakes as one line on stderr: exit code 1 for data and runtime errors, 2
    for a setting the library refused (naming the option), 128 + the signal's number when a
    signal stopped the command (130 for SIGINT, 143 for SIGTERM), 75 when another run holds the
    lock on an output."""
    try:
        yield
    except TrainingInterrupted as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(128 + exc.signum)
    except SettingError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param_hint=_option_names(ctx, exc.name)) from None
    except LockedError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_LOCKED)
    except LdacliError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("Error: interrupted", err=True)
        sys.exit(130)
    except OSError as exc:  # writing outputs: full disk, permissions, missing folder
        where = exc.filename or "output"
        raise click.ClickException(f"{where}: cannot write: {exc.strerror or exc}") from None


def _option_names(ctx: click.Context | None, name: str) -> str | None:
    """How the command line spells the library setting ``name`` (``--burn-in``,
    ``--smoothed/--no-smoothed``), or None when the command has no such option."""
    for param in ctx.command.params if ctx is not None else ():
        if param.name == name:
            return "/".join(param.opts + param.secondary_opts)
    return None


def _setup_logging(quiet: bool, verbose: bool) -> bool:
    """Send ldacli's log to stderr; returns whether a progress bar should be shown."""
    logger = logging.getLogger("ldacli")
    logger.handlers[:] = [logging.StreamHandler(sys.stderr)]
    logger.handlers[0].setFormatter(logging.Formatter("%(message)s"))
    logger.setLevel(logging.ERROR if quiet else logging.INFO if verbose else logging.WARNING)
    logger.propagate = False
    return not quiet and sys.stderr.isatty()


def _note(quiet: bool, message: str) -> None:
    if not quiet:
        click.echo(message, err=True)


def _same_file(a: str, b: str) -> bool:
    if a == "-" or b == "-":
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs: dict[str, str | None], inputs: dict[str, str | None]) -> None:
    """Before any work: each output (option -> path) names a file in an existing folder this
    user may write in, is not a folder, and is none of the inputs (option -> path) nor
    another output. A usage error (exit 2) names the option."""
    given = {opt: p for opt, p in outputs.items() if p}
    for opt, path in given.items():
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            raise click.BadParameter(f"expected a file name, found the folder {path!r}", param_hint=opt)
        if not os.path.isdir(folder):
            raise click.BadParameter(f"expected an existing folder for {path!r}, found none at {folder!r}", param_hint=opt)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise click.BadParameter(f"expected a folder this user may write in for {path!r}, found {folder!r} "
                                     f"read-only", param_hint=opt)
        for other, source in inputs.items():
            if source and _same_file(path, source):
                raise click.BadParameter(f"{path!r} is the {other} input: refusing to write over it", param_hint=opt)
    names = list(given)
    for i, opt in enumerate(names):
        for other in names[i + 1:]:
            if _same_file(given[opt], given[other]):
                raise click.BadParameter(f"{opt} and {other} must be different files, found {given[opt]!r} twice",
                                         param_hint=opt)


def corpus_options(pruning: bool):
    """The options that say how to read a corpus (pruning only where a vocabulary is built)."""

    def decorate(f):
        opts = [
            click.option("--format", "fmt", type=FORMATS, default="auto", show_default=True,
                         help="Corpus format; auto detects it from the content."),
            click.option("--vocab", type=str, default=None,
                         help="Vocabulary file, one word per line (UCI/LDA-C; found beside the "
                              "corpus by name when omitted). For text: a fixed vocabulary."),
        ]
        if pruning:
            opts += [
                click.option("--min-df", type=click.IntRange(min=1), default=1, show_default=True,
                             help="Text: drop words in fewer documents than this."),
                click.option("--max-df", type=click.FloatRange(0, 1, min_open=True), default=1.0,
                             show_default=True, help="Text: drop words in more than this fraction of documents."),
                click.option("--max-vocab", type=click.IntRange(min=1), default=None,
                             help="Text: keep only this many most frequent words."),
                click.option("--stop-words", default="english", show_default=True,
                             help="Text: 'english' (shipped list), 'none', or a file of words."),
            ]
        for opt in reversed(opts):
            f = opt(f)
        return f

    return decorate


def _read(path, fmt, vocab, quiet, **pruning):
    stop = pruning.pop("stop_words", "english")
    corpus = read_corpus(path, format=fmt, vocab=vocab,
                         stop_words=None if stop == "none" else stop, **pruning)
    for note in corpus.notes:
        _note(quiet, f"{path}: {note}")
    return corpus


quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bar or notes; errors only.")
scheduler_option = click.option(
    "--scheduler", default=None,
    help="Run on a Dask cluster: a scheduler's address (tcp://host:8786) or local:N for N local worker "
         "processes; the result is the same as on threads. Needs the dask extra: pip install 'ldacli[dask]'.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ldacli")
def main():
    """Latent Dirichlet Allocation topic models from the command line.

    \b
    Examples:
      ldacli train docword.kos.txt.gz -k 20 --iterations 500 -o kos.npz
      ldacli topics kos.npz
      ldacli infer kos.npz new_docs.txt -o theta.tsv
      ldacli perplexity kos.npz heldout.ldac
      ldacli info kos.npz
      ldacli report kos.npz -o kos.html
      ldacli diff yesterday.npz today.npz
    """


CGS, VEM, GIBBS = METHODS["cgs"], METHODS["vem"], METHODS["gibbs"]


@main.command()
@click.argument("corpus")
@click.option("-o", "--output", required=True, help="Model file to write (.npz).")
@click.option("-k", "--topics", "n_topics", type=click.IntRange(min=1), default=None,
              help=f"Number of topics.  [default: {DEFAULT_TOPICS}]")
@click.option("--method", type=click.Choice(list(METHODS)), default=None,
              help="cgs: collapsed Gibbs sampling; vem: variational EM (Blei, Ng & Jordan 2003); "
                   f"gibbs: uncollapsed (blocked) Gibbs sampling.  [default: {DEFAULT_METHOD}, or the "
                   "checkpoint's method with --resume]")
@click.option("--iterations", type=click.IntRange(min=1), default=None,
              help="Sweeps (cgs, gibbs) or at most this many EM iterations (vem), counting those "
                   f"before a --resume.  [default: {CGS.DEFAULT_ITERATIONS}; vem: {VEM.DEFAULT_ITERATIONS}]")
@click.option("--alpha", type=click.FloatRange(0, min_open=True), default=None,
              help=f"Document-topic prior for EACH topic (not MALLET's sum over topics; "
                   f"the sum is K * alpha); vem starts from it and estimates an asymmetric "
                   f"alpha unless --fixed-alpha.  [default: {DEFAULT_ALPHA}]")
@click.option("--beta", type=click.FloatRange(0, min_open=True), default=None,
              help=f"Topic-word prior for each word (tomotopy's eta); vem starts from it and "
                   f"estimates it unless --fixed-eta.  [default: {DEFAULT_BETA}]")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads (cgs: sampling shards; vem: the E-step; gibbs: all steps); the result "
                   "is the same for any number.  [default: all cores this process may use]")
@click.option("--burn-in", type=click.IntRange(min=0), default=None,
              help="gibbs: sweeps discarded before averaging theta and phi.  [default: half of --iterations]")
@click.option("--estep-tol", type=click.FloatRange(0), default=None,
              help=f"vem: a document's E-step stops when fewer than this fraction of its tokens "
                   f"change topic in a round.  [default: {VEM.OPTIONS['estep_tol']:g}]")
@click.option("--estep-max-iter", type=click.IntRange(min=1), default=None,
              help=f"vem: at most this many E-step rounds per document.  [default: {VEM.OPTIONS['estep_max_iter']}]")
@click.option("--em-tol", type=click.FloatRange(0), default=None,
              help=f"vem: stop when an EM iteration raises the evidence lower bound by less than "
                   f"this (relative; 0: run all --iterations).  [default: {VEM.OPTIONS['em_tol']:g}]")
@click.option("--smoothed/--no-smoothed", default=None,
              help="vem: Dirichlet(beta) prior on the topics with a variational posterior "
                   "(smoothed, the default), or topics as plain parameters.")
@click.option("--estimate-alpha/--fixed-alpha", default=None,
              help="vem: estimate alpha by Newton's method in every M-step (default), or keep --alpha.")
@click.option("--estimate-eta/--fixed-eta", default=None,
              help="vem, smoothed: estimate the topic prior (--beta) by Newton's method (default), or keep it.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Random seed; without it fresh entropy is drawn and recorded in the model.")
@click.option("--checkpoint", type=str, default=None,
              help="Checkpoint file (.npz): written every --checkpoint-every sweeps, at the end, and on Ctrl-C/SIGTERM.")
@click.option("--checkpoint-every", type=click.IntRange(min=0), default=0, show_default=True,
              help="Sweeps (vem: EM iterations) between checkpoints (0: only at the end and on a signal).")
@click.option("--resume", type=str, default=None,
              help="Continue from this checkpoint (any method); the result equals an uninterrupted run.")
@click.option("--sampler", type=click.Choice(["auto", *SAMPLERS]), default=None,
              help="cgs: dense: O(K) per token; sparse: SparseLDA, exact, O(topics of the document and "
                   "word); alias: Metropolis-Hastings with alias tables, O(1) per token; auto picks "
                   f"by K and document length (dense below 24 topics on documents under 400 tokens; "
                   f"else sparse). Recorded in the model.  [default: {CGS.OPTIONS['sampler']}]")
@click.option("--shards", type=click.IntRange(min=1), default=None,
              help="cgs: document shards (and as many word slices) that threads sample in parallel, "
                   "the most threads that help; each sweep is N rounds of disjoint blocks. The output "
                   "depends on the seed and the shards, never on --threads; 1 is the exact sequential "
                   "sampler.  [default: one per 100,000 tokens, at most 4]")
@click.option("--loglik-every", type=click.IntRange(min=1), default=None,
              help="Sweeps between log-likelihood evaluations (trace, progress, early stopping; vem "
                   f"records the evidence lower bound every iteration).  [default: {CGS.DEFAULT_LOGLIK_EVERY}]")
@click.option("--optimize-interval", type=click.IntRange(min=0), default=None,
              help="cgs: learn an asymmetric alpha and a symmetric beta from the counts every N sweeps "
                   "(Minka's fixed point); --alpha/--beta are then starting values.  [default: 0, off]")
@click.option("--optimize-burn-in", type=click.IntRange(min=0), default=None,
              help="cgs: sweeps before the first optimisation.  [default: 0]")
@click.option("--holdout", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              help="Hold out this fraction of the documents and stop when their perplexity "
                   "(document completion, every --loglik-every sweeps) stops improving; with --patience.")
@click.option("--patience", type=click.IntRange(min=1), default=None,
              help="Evaluations without improvement before stopping (with --holdout).")
@click.option("--max-seconds", type=click.FloatRange(0, min_open=True), default=None,
              help="Stop after the sweep (EM iteration) during which this much time has passed (the "
                   "model records the sweeps done; the result then depends on the machine's speed).")
@click.option("--wait", type=click.FloatRange(0), default=None,
              help="When another run holds the lock on -o or --checkpoint, wait up to this many seconds "
                   "for it instead of exiting at once with code 75.")
@click.option("--warm-start", type=str, default=None,
              help="Start from this model (retraining on a grown corpus): its vocabulary order is kept "
                   "and new words appended, each token's first topic is drawn from its topics, its priors "
                   "are the starting values, and topic k descends from its topic k.")
@click.option("--align-to", type=str, default=None,
              help="After training, renumber the topics onto this model's ids (Hungarian matching on "
                   "Jensen-Shannon distance).")
@scheduler_option
@click.option("--skip-unchanged", is_flag=True,
              help="Do nothing (exit 0) when -o exists and was trained with the same settings on a corpus "
                   "with the same fingerprint (and the same --warm-start file), as make would.")
@corpus_options(pruning=True)
@quiet_option
@click.option("-v", "--verbose", is_flag=True, help="Log the log-likelihood as training goes.")
@click.pass_context
def train(ctx, corpus, output, n_topics, method, iterations, alpha, beta, threads, burn_in, estep_tol,
          estep_max_iter, em_tol, smoothed, estimate_alpha, estimate_eta, seed, checkpoint,
          checkpoint_every, resume, sampler, shards, loglik_every, optimize_interval, optimize_burn_in,
          holdout, patience, max_seconds, wait, warm_start, align_to, scheduler, skip_unchanged, fmt, vocab, min_df,
          max_df, max_vocab, stop_words, quiet, verbose):
    """Fit an LDA model to CORPUS by collapsed Gibbs sampling (default), variational EM or
    uncollapsed Gibbs sampling (--method).

    CORPUS is a UCI docword file, an LDA-C file, a text file (one document per line), a folder
    of .txt files, a shard folder (convert --shards; with --scheduler the workers read its
    files), or - for stdin; .gz is read transparently.

    \b
    Examples:
      ldacli train docword.kos.txt.gz -k 20 --iterations 500 --seed 1 -o kos.npz
      ldacli train docword.20ng.txt.gz -k 1000 --sampler sparse --threads 2 -o 20ng.npz
      ldacli train notes.txt --min-df 5 --max-df 0.5 -k 50 -o notes.npz \\
          --checkpoint notes.ckpt.npz --checkpoint-every 100
      ldacli train notes.txt --min-df 5 --max-df 0.5 -o notes.npz --resume notes.ckpt.npz
      ldacli train docword.kos.txt.gz -k 20 --method vem --seed 1 -o kos-vem.npz
      ldacli train docword.kos.txt.gz -k 20 --method gibbs --iterations 500 --burn-in 200 -o kos-gibbs.npz
      ldacli train today.ldac --warm-start yesterday.npz --iterations 100 -o today.npz --skip-unchanged
      ldacli train /shared/20ng-shards -k 100 --scheduler tcp://scheduler:8786 -o 20ng.npz
    """
    progress = _setup_logging(quiet, verbose)
    check_outputs({"-o/--output": output, "--checkpoint": checkpoint},
                  {"CORPUS": corpus, "--vocab": vocab, "--resume": None if checkpoint == resume else resume,
                   "--warm-start": warm_start, "--align-to": align_to})
    if skip_unchanged and resume:
        raise click.BadParameter("a resumed run continues where it stopped: there is nothing to compare",
                                 param_hint="--skip-unchanged")
    settings = dict(method=method, iterations=iterations, alpha=alpha, beta=beta, seed=seed,
                    loglik_every=loglik_every, holdout=holdout, patience=patience, warm_start=warm_start,
                    sampler=sampler, shards=shards, optimize_interval=optimize_interval,
                    optimize_burn_in=optimize_burn_in, burn_in=burn_in, estep_tol=estep_tol,
                    estep_max_iter=estep_max_iter, em_tol=em_tol, smoothed=smoothed,
                    estimate_alpha=estimate_alpha, estimate_eta=estimate_eta)
    with user_errors(ctx), locked([output], wait=wait) as removed:
        for path in removed:
            _note(quiet, f"{path}: removed, a temporary file left by a run that was killed")
        if scheduler and is_shard_folder(corpus):  # the workers read the shard files, the client the index
            if vocab is not None or (min_df, max_df, max_vocab) != (1, 1.0, None):
                raise click.BadParameter("a shard folder on a cluster is trained as written: choose the vocabulary "
                                         "when converting", param_hint="--vocab/--min-df/--max-df/--max-vocab")
            data = open_shard_folder(corpus)
            _note(quiet, f"{corpus}: the workers read its {data.n_shards} shard files")
        else:
            data = _read(corpus, fmt, vocab, quiet, min_df=min_df, max_df=max_df, max_vocab=max_vocab,
                         stop_words=stop_words)
        _note(quiet, f"{corpus}: {data.n_docs} documents, {data.n_words} words, {data.n_tokens} tokens")
        if skip_unchanged and unchanged(output, data, n_topics, **settings):
            _note(quiet, f"{output}: up to date (trained with these settings on this corpus); nothing to do")
            return
        t0 = time.perf_counter()
        model = run_train(data, n_topics, threads=threads, max_seconds=max_seconds, checkpoint=checkpoint,
                          checkpoint_every=checkpoint_every, resume=resume, progress=progress, wait=wait,
                          scheduler=scheduler, **settings)
        seconds = time.perf_counter() - t0
        if align_to:
            model, order, matching = align(model, Model.load(align_to))
            model.params["aligned_to"] = {"path": os.path.abspath(align_to), "sha256": file_sha256(align_to),
                                          "order": order, "distances": [float(d) for d in matching.distances]}
            moved = sum(1 for i, k in enumerate(order) if i != k)
            _note(quiet, f"{output}: topics renumbered onto {align_to}'s ids ({moved} of {len(order)} moved; "
                         f"median JS distance {np.median(matching.distances):.3f})")
        model.save(output)
    p = model.params
    unit = METHODS[p["method"]].unit
    ll = model.loglik_per_token[-1] if model.loglik_per_token.size else float("nan")
    why = "" if p["stopped"] == "iterations" else f" ({p['stopped']})"
    _note(quiet, f"{output}: {model.n_topics} topics after {p['iterations_done']} {unit}s{why} in {seconds:.1f} s, "
                 f"{METHODS[p['method']].trace_label} {ll:.4f}, seed {p['seed']}")


@main.command()
@click.argument("model")
@click.option("-n", "--top-words", type=click.IntRange(min=1), default=10, show_default=True,
              help="Words shown per topic.")
@click.option("--format", "fmt", type=click.Choice(["text", "tsv", "json"]), default="text",
              show_default=True, help="Output format.")
@click.option("--coherence", "measure", type=click.Choice(list(COHERENCE_MEASURES)), default=None,
              help="Also score each topic's top words: umass (Mimno et al. 2011; the sum over the "
                   "N(N-1)/2 rank-ordered pairs of log((D(w_m, w_l) + 1) / D(w_l)), D = document "
                   "counts, epsilon 1; nearer 0 is better) or npmi (Bouma 2009; the mean over pairs "
                   "of log((P(w,v) + eps) / (P(w) P(v))) / -log(P(w,v) + eps) with document "
                   "probabilities, eps 1e-12; in [-1, 1], higher is better).")
@click.option("--reference", default=None,
              help="Corpus whose documents are counted for --coherence.  [default: the training "
                   "corpus recorded in the model, checked by fingerprint]")
@click.option("--reference-format", type=FORMATS, default="auto", show_default=True,
              help="Format of --reference.")
@click.option("--reference-vocab", default=None,
              help="Vocabulary file of --reference (UCI/LDA-C; found beside it when omitted).")
@click.option("--top-n", type=click.IntRange(min=2), default=DEFAULT_TOP_N, show_default=True,
              help="Top words per topic that --coherence scores (pairs among them).")
@quiet_option
def topics(model, top_words, fmt, measure, reference, reference_format, reference_vocab, top_n, quiet):
    """Show the most probable words of each topic of MODEL, optionally with coherence.

    With --coherence, each topic gets a score computed from document co-occurrence counts of
    its --top-n most probable words in the reference corpus, and the mean over topics is
    printed last (text), in every row (tsv) or under "coherence" (json). Learned
    (asymmetric) priors are shown beside each topic.

    \b
    Examples:
      ldacli topics kos.npz
      ldacli topics kos.npz -n 20 --format tsv > topics.tsv
      ldacli topics kos.npz --format json | jq '.topics[0]'
      ldacli topics kos.npz --coherence npmi
      ldacli topics kos.npz --coherence umass --top-n 20 --reference wiki.ldac
    """
    _setup_logging(quiet, False)
    with user_errors():
        m = Model.load(model)
        scores = None
        if measure is not None:
            if reference is None:
                ref = training_reference(m)
                ref_name = m.params.get("corpus_source", "")
            else:
                ref = read_corpus(reference, format=reference_format, vocab=reference_vocab,
                                  stop_words=None, fixed_vocab=None if reference_vocab else m.vocab)
                ref_name = reference
            scores = topic_coherence(m, ref, measure=measure, top_n=top_n)
            scores["reference"] = ref_name
    tops = m.top_words(top_words)
    learned = bool(m.params.get("optimize_interval")) or not np.all(m.alpha == m.alpha[0])
    if fmt == "json":
        out = {"model": model, "topics": [
            {"topic": k, "alpha": float(m.alpha[k]),
             **({"coherence": scores["per_topic"][k]} if scores else {}),
             "words": [{"word": w, "probability": p} for w, p in words]}
            for k, words in enumerate(tops)]}
        if scores:
            out["coherence"] = {key: scores[key] for key in
                                ("measure", "top_n", "epsilon", "mean", "reference", "reference_docs")}
        click.echo(json.dumps(out, indent=2))
    elif fmt == "tsv":
        click.echo("topic\trank\tword\tprobability" + (f"\t{measure}" if scores else ""))
        for k, words in enumerate(tops):
            extra = f"\t{scores['per_topic'][k]:.6g}" if scores else ""
            for r, (w, p) in enumerate(words, 1):
                click.echo(f"{k}\t{r}\t{w}\t{p:.6g}{extra}")
        if scores:
            _note(quiet, f"mean {measure} coherence {scores['mean']:.6g} (top {scores['top_n']} words, "
                         f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} reference documents)")
    else:
        width = len(str(len(tops) - 1))
        for k, words in enumerate(tops):
            label = f"topic {k:>{width}}"
            if learned:
                label += f" (alpha {m.alpha[k]:.4g})"
            if scores:
                label += f" [{measure} {scores['per_topic'][k]:.4g}]"
            click.echo(f"{label}: " + "  ".join(f"{w} ({p:.3f})" for w, p in words))
        if scores:
            click.echo(f"mean {measure} coherence: {scores['mean']:.6g} (top {scores['top_n']} words, "
                       f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} documents of "
                       f"{scores['reference']})")


@main.command()
@click.argument("model")
@click.argument("corpus")
@click.option("-o", "--output", required=True,
              help="Where to write theta: .npz (theta, doc_ids), .tsv or .csv (doc id, then one column per topic).")
@click.option("--iterations", type=click.IntRange(min=1), default=DEFAULT_ITERATIONS, show_default=True,
              help="Gibbs sweeps per document in all.")
@click.option("--burn-in", type=click.IntRange(min=0), default=DEFAULT_BURN_IN, show_default=True,
              help="Sweeps discarded before averaging theta over the rest.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Random seed; without it fresh entropy is drawn and recorded in the output (.npz).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads; the result is the same for any number.  [default: all cores this process may use]")
@scheduler_option
@corpus_options(pruning=False)
@quiet_option
def infer(model, corpus, output, iterations, burn_in, seed, threads, scheduler, fmt, vocab, quiet):
    """Infer topic proportions of the documents in CORPUS under MODEL.

    Words are matched to the model's vocabulary by string; unknown words are dropped and
    counted on stderr.

    \b
    Examples:
      ldacli infer kos.npz new_docs.txt -o theta.tsv
      ldacli infer kos.npz docword.new.txt.gz --vocab vocab.new.txt -o theta.npz --seed 3
    """
    progress = _setup_logging(quiet, False)
    if not output.lower().endswith((".npz", ".tsv", ".csv")):
        raise click.BadParameter(f"expected a file name ending in .npz, .tsv or .csv, found {output!r}", param_hint="-o/--output")
    check_outputs({"-o/--output": output}, {"MODEL": model, "CORPUS": corpus, "--vocab": vocab})
    if burn_in >= iterations:
        raise click.BadParameter(f"must be smaller than --iterations ({iterations}), found {burn_in}", param_hint="--burn-in")
    with user_errors(), locked([output]):
        m = Model.load(model)
        data = _read_for_model(corpus, fmt, vocab, m, quiet)
        with cluster(scheduler) as client:
            result, dropped = run_infer(m, data, iterations=iterations, burn_in=burn_in, seed=seed, threads=threads,
                                        client=client, progress=progress)
        result.save(output)
    _report_dropped(quiet, corpus, dropped, data.n_tokens)


def _read_for_model(corpus, fmt, vocab, model, quiet):
    """Read a corpus to be scored by ``model``: text is tokenised against the model's vocabulary."""
    data = read_corpus(corpus, format=fmt, vocab=vocab, stop_words=None,
                       fixed_vocab=None if vocab else model.vocab)
    for note in data.notes:
        _note(quiet, f"{corpus}: {note}")
    return data


def _report_dropped(quiet, corpus, dropped, total):
    if dropped:
        _note(quiet, f"{corpus}: dropped {dropped} of {total} tokens whose words the model does not know")


@main.command()
@click.argument("model")
@click.argument("corpus")
@click.option("--method", type=click.Choice(list(EVAL_METHODS)), default="completion", show_default=True,
              help="Estimator: completion (document completion), left-to-right (particles) or "
                   "importance (samples of theta from the prior).")
@click.option("--iterations", type=click.IntRange(min=1), default=DEFAULT_ITERATIONS, show_default=True,
              help="completion: Gibbs sweeps per document to estimate theta from the observed half.")
@click.option("--burn-in", type=click.IntRange(min=0), default=DEFAULT_BURN_IN, show_default=True,
              help="completion: sweeps discarded before averaging theta.")
@click.option("--particles", type=click.IntRange(min=2), default=DEFAULT_PARTICLES, show_default=True,
              help="left-to-right: particles per filter (10 independent filters per document); "
                   "with --resample, particles per document.")
@click.option("--resample", is_flag=True,
              help="left-to-right: re-draw earlier topics at every position (the original "
                   "algorithm, quadratic in document length) instead of the linear sequential one.")
@click.option("--samples", type=click.IntRange(min=2), default=DEFAULT_SAMPLES, show_default=True,
              help="importance: draws of theta from the prior per document.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Random seed; without it fresh entropy is drawn and printed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="completion: threads; the result is the same for any number.  [default: all cores]")
@scheduler_option
@corpus_options(pruning=False)
@quiet_option
def perplexity(model, corpus, method, iterations, burn_in, particles, resample, samples, seed, as_json,
               threads, scheduler, fmt, vocab, quiet):
    """Held-out log-likelihood and per-word perplexity of CORPUS under MODEL.

    \b
    --method completion (default): each document's tokens (in word-id order) alternate
      between an observed half, from which theta is estimated with the topics fixed, and a
      scored half. Standard error: batch means over the averaged sweeps.
    --method left-to-right: p(w_d) by the left-to-right particle estimator (Wallach et al.
      2009) over ALL tokens of each document, taken in a random order drawn from --seed,
      by 10 independent particle filters (unbiased for p(w_d), linear in document length);
      --resample for the original algorithm (quadratic). Standard error: across filters
      (particles), combined over documents. On long documents the log-estimate rises with
      --particles until it settles: compare two values.
    --method importance: p(w_d) = mean over --samples draws theta ~ Dir(alpha) of
      p(w_d | theta), ALL tokens scored; unbiased but very noisy on long documents.

    Every output names the estimator, the natural-log log-likelihood with its standard
    error, the documents and tokens scored, and perplexity = exp(-log_likelihood / tokens).

    \b
    Examples:
      ldacli perplexity kos.npz heldout.ldac
      ldacli perplexity kos.npz heldout.ldac --seed 1 --json
      ldacli perplexity kos.npz heldout.ldac --method left-to-right --particles 20 --seed 1
      ldacli perplexity kos.npz heldout.ldac --method importance --samples 10000
    """
    progress = _setup_logging(quiet, False)
    if method == "completion" and burn_in >= iterations:
        raise click.BadParameter(f"must be smaller than --iterations ({iterations}), found {burn_in}", param_hint="--burn-in")
    with user_errors():
        m = Model.load(model)
        data = _read_for_model(corpus, fmt, vocab, m, quiet)
        with cluster(scheduler) as client:
            result = compute_perplexity(m, data, method=method, iterations=iterations, burn_in=burn_in,
                                        particles=particles, resample=resample, samples=samples, seed=seed,
                                        threads=threads, client=client, progress=progress)
    _report_dropped(quiet, corpus, result["dropped_tokens"], data.n_tokens)
    result = {"model": model, "corpus": corpus, **result}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    if method == "completion":
        how = "theta from half of each document, the other half scored"
        se_how = f"batch means over {result['batches']} blocks of sweeps"
    elif method == "left-to-right":
        if result["resample"]:
            how = f"{result['particles']} particles re-drawing earlier topics (quadratic), all tokens scored"
            se_how = "across particles"
        else:
            how = f"{result['filters']} particle filters of {result['particles']} particles, all tokens scored"
            se_how = "across filters"
    else:
        how = f"{result['samples']} samples of theta from the prior, all tokens scored"
        se_how = "across samples"
    click.echo(f"estimator:       {result['estimator']} ({how})")
    click.echo(f"documents:       {result['n_docs']}")
    click.echo(f"tokens scored:   {result['n_tokens']}")
    click.echo(f"log-likelihood:  {result['log_likelihood']:.6g} (natural log)")
    click.echo(f"standard error:  {result['standard_error']:.3g} ({se_how})")
    click.echo(f"perplexity:      {result['perplexity']:.6g}")
    click.echo(f"seed:            {result['seed']}")


# Exit code of `diff --max-drift` when a matched topic moved further than allowed: the command
# succeeded, but something needs a look.
EXIT_DRIFT = 3


@main.command()
@click.argument("model_a")
@click.argument("model_b")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("-n", "--top-words", "top", type=click.IntRange(min=1), default=DEFAULT_TOP, show_default=True,
              help="Top words per topic compared (gained and lost).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=DEFAULT_UNMATCHED, show_default=True,
              help="Matched topics further apart than this (Jensen-Shannon distance, 0 to 1) are reported "
                   "as having no counterpart.")
@click.option("--max-drift", type=click.FloatRange(0, 1), default=None,
              help=f"Exit with code {EXIT_DRIFT} when a matched topic moved further than this.")
def diff(model_a, model_b, as_json, top, threshold, max_drift):
    """Compare the topics of MODEL_A (say, yesterday's) and MODEL_B (today's).

    Topics are matched one to one by the Hungarian algorithm on the Jensen-Shannon distance
    between their word distributions (words matched by string, so the vocabularies may
    differ). For each pair: the distance, the top words gained and lost, and the prevalence
    (mean topic proportion) in each; then the topics with no counterpart.

    \b
    Examples:
      ldacli diff yesterday.npz today.npz
      ldacli diff yesterday.npz today.npz --json | jq .max_distance
      ldacli diff yesterday.npz today.npz --max-drift 0.3 || echo "topics moved" | mail -s ldacli me
    """
    with user_errors():
        a, b = Model.load(model_a), Model.load(model_b)
        result = diff_models(a, b, top=top, unmatched=threshold)
    result = {"a": model_a, "b": model_b, **result}
    drifted = [t for t in result["topics"] if t["matched"] and max_drift is not None and t["distance"] > max_drift]
    if as_json:
        click.echo(json.dumps({**result, "max_drift": max_drift, "drifted": [[t["a"], t["b"]] for t in drifted]}, indent=2))
    else:
        click.echo(f"A: {model_a} ({a.n_topics} topics)    B: {model_b} ({b.n_topics} topics)")
        click.echo(f"matched {sum(t['matched'] for t in result['topics'])}, renumbered {result['renumbered']}, "
                   f"JS distance median {result['median_distance']:.3f}, max {result['max_distance']:.3f}")
        for t in result["topics"]:
            mark = "" if t["matched"] else "  (no counterpart)"
            click.echo(f"A {t['a']:>3} ~ B {t['b']:<3} JS {t['distance']:.3f}  prevalence "
                       f"{100 * t['prevalence_a']:.1f}% -> {100 * t['prevalence_b']:.1f}%{mark}: "
                       + " ".join(t["top_words_b"][:8]))
            if t["gained"] or t["lost"]:
                click.echo(f"        + {' '.join(t['gained']) or '-'}    - {' '.join(t['lost']) or '-'}")
        for side in ("a", "b"):
            if result[f"only_in_{side}"]:
                click.echo(f"only in {side.upper()}: topics {', '.join(map(str, result[f'only_in_{side}']))}")
    if drifted:
        worst = max(drifted, key=lambda t: t["distance"])
        click.echo(f"Drift: {len(drifted)} matched topics moved further than {max_drift:g} (worst: A {worst['a']} ~ "
                   f"B {worst['b']}, {worst['distance']:.3f})", err=True)
        sys.exit(EXIT_DRIFT)


@main.command()
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def info(model, as_json):
    """Describe a model (or checkpoint) file: parameters, sizes, priors, provenance, trace.

    Shows the sampler, K, V, D and N, the priors (alpha per topic, listed when there are few
    topics and summarised otherwise; beta) and whether they were learned or set, the seed,
    version and training corpus (path, format, fingerprint), and the log-likelihood trace
    summarised (first, last and best point). A checkpoint also shows the sweeps done.

    \b
    Examples:
      ldacli info kos.npz
      ldacli info kos.npz --json | jq .priors.alpha.sum
      ldacli info run.ckpt.npz
    """
    with user_errors():
        summary = describe_file(model)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        for line in format_info(summary):
            click.echo(line)


@main.command()
@click.argument("model")
@click.option("-o", "--output", required=True, help="The HTML file to write.")
@click.option("--corpus", default=None,
              help="Corpus for coherence, prevalence and representative documents.  [default: the training "
                   "corpus recorded in the model, when it can be found unchanged]")
@click.option("--corpus-format", type=FORMATS, default="auto", show_default=True, help="Format of --corpus.")
@click.option("--corpus-vocab", default=None, help="Vocabulary file of --corpus (UCI, LDA-C, ...).")
@click.option("--diff", "old", default=None, help="An older model: show the topics matched to its and their drift.")
@click.option("--png", is_flag=True, help="Also write the topic map and the trace as PNG images beside the report.")
@click.option("--svg", is_flag=True, help="Also write them as SVG images.")
@quiet_option
def report(model, output, corpus, corpus_format, corpus_vocab, old, png, svg, quiet):
    """Write a self-contained, interactive HTML report of MODEL that works offline: a topic map,
    each topic's words ranked by relevance with a lambda control, the model at a glance (priors,
    trace, why training stopped), coherence and representative documents, and a diff against an
    older model. Needs the report extra: pip install 'ldacli[report]'.

    \b
    Examples:
      ldacli report kos.npz -o kos.html
      ldacli report today.npz -o today.html --diff yesterday.npz --png
      ldacli report kos.npz -o kos.html --corpus heldout.ldac
    """
    _setup_logging(quiet, False)
    check_outputs({"-o/--output": output}, {"MODEL": model, "--corpus": corpus, "--diff": old})
    with user_errors(), locked([output]):
        m = Model.load(model)
        if corpus is not None:
            reference = read_corpus(corpus, format=corpus_format, vocab=corpus_vocab, stop_words=None,
                                    fixed_vocab=None if corpus_vocab else m.vocab)
        else:
            try:
                reference = training_reference(m, "--corpus")
            except LdacliError as exc:
                _note(quiet, f"{model}: no coherence or documents in the report: {exc}")
                reference = None
        t0 = time.perf_counter()
        written = write_report(model, output, corpus=reference, old_path=old, png=png, svg=svg)
    _note(quiet, f"{output}: report of {model}, {written['bytes'] / 1e6:.1f} MB, in {time.perf_counter() - t0:.1f} s"
                 + (f"; images {', '.join(written['images'])}" if written["images"] else ""))


@main.command()
@click.argument("source")
@click.option("-o", "--output", required=True, help="Bag-of-words file to write.")
@click.option("--vocab-out", default=None,
              help="Vocabulary file to write.  [default: the name the readers look for beside the output]")
@click.option("--to", "out_format", type=click.Choice(list(WRITE_FORMATS)), default="ldac", show_default=True,
              help="Output format: LDA-C, UCI bag-of-words, Matrix Market (documents x words) or a "
                   "scipy sparse .npz (scipy.sparse.save_npz).")
@click.option("--shards", type=click.IntRange(min=1), default=None,
              help="Write a shard folder at -o instead: this many files of consecutive documents (as "
                   "train --shards cuts them), an index and the vocabulary, for a Dask cluster whose "
                   "workers read their own shards.")
@corpus_options(pruning=True)
@quiet_option
@click.pass_context
def convert(ctx, source, output, vocab_out, out_format, shards, fmt, vocab, min_df, max_df, max_vocab, stop_words,
            quiet):
    """Turn a corpus (typically text) into a bag-of-words file plus a vocabulary file, or into
    a shard folder (--shards).

    With --vocab, the vocabulary is fixed (words outside it are dropped), so several corpora
    can share one vocabulary.

    \b
    Examples:
      ldacli convert docs.txt --min-df 5 --max-df 0.5 -o docs.ldac
      ldacli convert new_docs.txt --vocab docs.vocab -o new_docs.ldac
      ldacli convert docs/ --to uci -o docword.docs.txt
      ldacli convert docword.20ng.txt.gz --shards 16 -o /shared/20ng-shards
    """
    _setup_logging(quiet, False)
    if shards is not None:
        _convert_to_shards(ctx, source, output, shards, fmt, vocab, quiet, min_df=min_df, max_df=max_df,
                           max_vocab=max_vocab, stop_words=stop_words)
        return
    vocab_out = vocab_out or default_vocab_path(output, out_format)
    check_outputs({"-o/--output": output, "--vocab-out": vocab_out}, {"SOURCE": source, "--vocab": vocab})
    with user_errors(), locked([output, vocab_out]):
        data = _read(source, fmt, vocab, quiet, min_df=min_df, max_df=max_df, max_vocab=max_vocab, stop_words=stop_words)
        write_corpus(data, output, vocab_out, format=out_format)
    _note(quiet, f"{output}: {data.n_docs} documents, {data.n_words} words, {data.n_tokens} tokens; vocabulary in {vocab_out}")


def _convert_to_shards(ctx, source, output, shards, fmt, vocab, quiet, **pruning) -> None:
    for name in ("vocab_out", "out_format"):
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
            raise click.BadParameter("a shard folder holds its own vocabulary and npz shard files",
                                     param_hint=_option_names(ctx, name))
    parent = os.path.dirname(os.path.abspath(output))
    if os.path.lexists(output) and not is_shard_folder(output):
        raise click.BadParameter(f"{output!r} exists and is not a shard folder: refusing to replace it",
                                 param_hint="-o/--output")
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise click.BadParameter(f"expected an existing folder this user may write in for {output!r}, found "
                                 f"{parent!r} missing or read-only", param_hint="-o/--output")
    if _same_file(output, source):
        raise click.BadParameter(f"{output!r} is the SOURCE input: refusing to write over it", param_hint="-o/--output")
    with user_errors(), locked([output]):
        data = _read(source, fmt, vocab, quiet, **pruning)
        write_shards(data, output, shards)
        folder = open_shard_folder(output)
    _note(quiet, f"{output}: {folder.n_docs} documents, {folder.n_words} words, {folder.n_tokens} tokens in "
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
