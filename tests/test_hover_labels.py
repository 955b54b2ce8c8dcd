"""Hover labels on real logs: one finding at a time with its evidence first, and each value named by what it is
("step: step 261" and "non-finite values" on a count of repeated steps were wrong)."""

from __future__ import annotations

from conftest import FIXTURES, corpus
from trainlint.core.linemap import LineMap
from trainlint.judge import judge_path
from trainlint.lsp.hover import finding_markdown, findings_markdown

HF = FIXTURES / "live" / "hf-diverge" / "train.log"


def test_a_repeated_step_count_is_not_called_non_finite():
    path = corpus("json_logs/Kevindic0214__detectron2_training__output__metrics.json")
    rep = judge_path(str(path))
    dup = [f for f in rep.findings if f.id == "TL-DUPLICATE-STEPS"][0]
    md = finding_markdown(dup, rep.log)
    assert "- repeated steps: 1" in md and "non-finite" not in md
    assert "- step 19\n" in md and "step: step" not in md


def test_evidence_first_one_finding_at_a_time_and_lines_in_the_clients_lines():
    rep = judge_path(str(HF))
    here = [f for f in rep.findings if f.location.line == 760]
    # one problem, one finding: TP-DEAD-RUN on the same value is folded into TP-DIVERGE's evidence (issue 30)
    assert [f.id for f in here] == ["TP-DIVERGE"] and "TP-DEAD-RUN" in here[0].evidence.text
    # two findings shown on one line: the worst first, the other named
    here = here + [f for f in rep.findings if f.id == "TL-HELDOUT-RISE"]
    md = findings_markdown(here, rep.log)
    assert md.startswith("**TP-DIVERGE** · FAIL") and md.count("**Measured**") == 1
    assert md.index("> `loss`: end level 91.65") < md.index("**Measured**") < md.index("**Interpretation**")
    assert "gave back 7.65x its descent" in md
    assert md.endswith("Also on this line: TL-HELDOUT-RISE (WARN) (next problem: F8 in VS Code, ]d in Neovim)")
    assert "- at: line 760" in md
    m = LineMap(str(HF)).update()
    lf = findings_markdown(here, rep.log, lambda _p, line: m.to_lf(line)[0])
    assert "- at: line 165" in lf and "- minimum: line 7 " in lf  # as Neovim's buffer counts the tqdm log
    rise = finding_markdown([f for f in rep.findings if f.id == "TL-HELDOUT-RISE"][0], rep.log)
    assert "- best at: progress-bar step 50" in rise
