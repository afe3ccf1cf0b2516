"""Every reader against generated inputs, valid and broken (tests/fuzzing.py): each is read, or
refused with the project's own error. A seeded, bounded sample; benchmarks/fuzz.py runs tens of
thousands."""

import fuzzing
import pytest
from hypothesis import HealthCheck, given, settings

FUZZ = settings(max_examples=120, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

FAMILIES = {
    "ldac": fuzzing.transported(fuzzing.ldac_inputs()),
    "uci": fuzzing.transported(fuzzing.uci_inputs()),
    "text": fuzzing.transported(fuzzing.text_inputs()),
    "textdir": fuzzing.textdir_inputs(),
    "mtx": fuzzing.transported(fuzzing.mtx_inputs()),
    "npz": fuzzing.transported(fuzzing.scipy_npz_inputs()),
    "vocab": fuzzing.vocab_inputs(),
    "own files": fuzzing.own_file_inputs(),
    "shard folder": fuzzing.shard_folder_inputs(),
    "long words": fuzzing.long_word_inputs(),
    "compressed members": fuzzing.compressed_member_inputs(),
    "non-regular files": fuzzing.non_regular_inputs(),
    "history": fuzzing.history_inputs(),
    "trends": fuzzing.trends_inputs(),
    "select-k folders": fuzzing.select_k_inputs(),
    "token patterns": fuzzing.token_pattern_inputs(),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_generated_input_is_read_or_refused_with_our_own_error(family):
    @FUZZ
    @given(FAMILIES[family])
    def check(item):
        fuzzing.check(*item)

    check()


@pytest.mark.slow
def test_hostile_names_reach_no_terminal_raw_and_every_table_parses_back():
    """Words, ids, topic names and params full of escape sequences and controls, through topics,
    info, diff, export and name, on a real terminal or into a pipe (fuzzing.hostile_name_inputs)."""
    @settings(FUZZ, max_examples=60)
    @given(fuzzing.hostile_name_inputs())
    def check(item):
        fuzzing.check(*item)

    check()
