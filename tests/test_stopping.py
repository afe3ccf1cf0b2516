"""Early stopping on held-out perplexity: the split, the evaluator, the rule, and a wired loop."""

import dataclasses
import json

import numpy as np
import pytest

import ldacli
import ldacli.corpora.synthetic
from ldacli.errors import LdacliError
from ldacli.scoring.perplexity import perplexity
from ldacli.info import describe
from ldacli.scoring.fixed_topics import HeldOutEvaluator, holdout_split
from ldacli.methods.stopping import EarlyStopping
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.partition import shard_bounds


def test_holdout_split_is_a_seeded_partition(planted):
    c = planted.corpus
    train, held, idx = holdout_split(c, 0.1, seed=3)
    assert held.n_docs == 20 and train.n_docs == 180 and train.n_tokens + held.n_tokens == c.n_tokens
    assert held.doc_ids == [c.doc_ids[i] for i in idx] and set(train.doc_ids).isdisjoint(held.doc_ids)
    np.testing.assert_array_equal(holdout_split(c, 0.1, seed=3)[2], idx)
    assert not np.array_equal(holdout_split(c, 0.1, seed=4)[2], idx)
    assert holdout_split(c, 0.999, seed=1)[0].n_docs == 1  # always something left to train on
    with pytest.raises(LdacliError, match="holdout"):
        holdout_split(c, 1.0, seed=1)


def test_evaluator_is_document_completion_with_a_fixed_seed(planted):
    model = ldacli.train(planted.corpus, 5, iterations=40, seed=1)
    held = ldacli.corpora.synthetic.generate(30, 5, 50, doc_length=40, alpha=0.2, seed=9, planted=True).corpus
    ev = HeldOutEvaluator(held, iterations=30, burn_in=10, seed=5)
    p = ev.perplexity(model.phi, model.alpha)
    assert p == ev.perplexity(model.phi, model.alpha)  # common random numbers: same topics, same score
    ref = perplexity(model, held, estimator="completion", iterations=30, burn_in=10, seed=5)
    assert p == pytest.approx(ref["perplexity"], rel=1e-12) and ev.n_tokens == ref["n_tokens"]
    uniform = np.full_like(model.phi, 1 / model.phi.shape[1])
    flat = ev.perplexity(uniform, model.alpha)
    assert flat == pytest.approx(50, rel=1e-9) and flat > p


def test_patience_rule_and_its_state_round_trip():
    s = EarlyStopping(patience=2, min_delta=0.01)
    assert not s.observe(10, 100.0) and not s.observe(20, 90.0)
    assert not s.observe(30, 89.5)  # less than 1% better: not an improvement
    assert s.observe(40, 95.0)
    assert s.best == (20, 90.0)
    assert "did not improve for 2 evaluations (best 90 at sweep 20" in s.reason
    back = EarlyStopping.from_state(json.loads(json.dumps(s.state())))
    assert back == s and back.reason == s.reason
    assert s.summary() == {"stopped_early": True, "stop_reason": s.reason, "best_iteration": 20,
                           "best_heldout_perplexity": 90.0}
    with pytest.raises(LdacliError, match="patience"):
        EarlyStopping(0)


def test_a_training_loop_wired_as_intended_stops_and_records_why(planted, tmp_path):
    # What train.py will do, written out with the kernel: evaluate every 5 sweeps, stop when
    # held-out perplexity stops improving, record the reason in the model's params.
    corpus = planted.corpus
    train, held, _ = holdout_split(corpus, 0.2, seed=1)
    ev = HeldOutEvaluator(held, seed=1)
    stopper = EarlyStopping(patience=3)
    words, doc_ptr = train.tokens()
    K, V, alpha, beta = 5, train.n_words, np.full(5, 0.1), 0.01
    rng = np.random.default_rng(1)
    z = rng.integers(0, K, words.size, dtype=np.int32)
    state = ThreadsSampler("dense", words.astype(np.int32), doc_ptr, z, V, K, alpha, beta,
                           shard_bounds(doc_ptr, 1), [rng])
    for it in range(1, 1001):
        state.sweep()
        if it % 5 == 0:
            phi = (state.counts.nwk.T + beta) / (state.counts.nk[:, None] + V * beta)
            if stopper.observe(it, ev.perplexity(phi, alpha)):
                break
    assert it < 1000 and stopper.should_stop
    best_it, best = stopper.best
    assert best < 26  # planted topics: 5 blocks of 10 words, a perplexity near 10 to 20
    model = ldacli.train(train, 5, iterations=2, seed=1)
    model = dataclasses.replace(model, params={**model.params, "holdout": 0.2, "patience": 3, **stopper.summary()})
    model.save(str(tmp_path / "m.npz"))
    info = describe(str(tmp_path / "m.npz"))
    assert info["stopping"]["stopped_early"] is True and info["stopping"]["best_iteration"] == best_it
