"""The rules of ``trainlint preflight`` (fine-tuning datasets), registered with every other rule.

Only the rule objects live here, so the registry ``check`` loads at start-up costs nothing more; the checks
themselves are in :mod:`trainlint.rules.dataset_checks`, which only ``preflight`` imports.
"""

from __future__ import annotations

from .base import Level, Rule
from .registry import describe

TP_PRE_MALFORMED = Rule("TP-PRE-MALFORMED-JSONL", Level.FAIL, "dataset-lines", "A line is not a JSON object")
TL_PRE_NO_TEXT = Rule("TL-PRE-NO-TEXT", Level.FAIL, "dataset-lines", "An example lacks the text or chat field")
TL_PRE_EMPTY = Rule("TL-PRE-EMPTY-TEXT", Level.WARN, "dataset-text", "An example's text is empty")
TL_PRE_CHAT = Rule("TL-PRE-CHAT-TURNS", Level.WARN, "dataset-chat", "A chat example's turns cannot train a reply")
TL_PRE_DUPLICATE = Rule("TL-PRE-DUPLICATE", Level.WARN, "dataset-duplicates", "An example occurs more than once")
TL_PRE_LEAKAGE = Rule("TL-PRE-LEAKAGE", Level.FAIL, "dataset-leakage",
                      "An evaluation example also occurs in the training data")
TL_PRE_TOO_LONG = Rule("TL-PRE-TOO-LONG", Level.WARN, "tokenizer", "An example is longer than the context")
TL_PRE_NO_EOS = Rule("TL-PRE-NO-EOS", Level.WARN, "tokenizer", "The tokenizer declares no EOS token")
TP_PRE_NO_EOS_APPEND = Rule("TP-PRE-NO-EOS-APPEND", Level.WARN, "tokenizer",
                            "Encoded examples do not end with the EOS token")
TL_PRE_NO_PAD = Rule("TL-PRE-NO-PAD", Level.WARN, "tokenizer", "The tokenizer has no pad token")
TL_PRE_PAD_IS_EOS = Rule("TL-PRE-PAD-IS-EOS", Level.WARN, "tokenizer", "The pad token is the EOS token")
TP_TOK_HIGH_OOV = Rule("TP-TOK-HIGH-OOV", Level.WARN, "tokenizer", "Too many tokens are the unknown token")
TL_PRE_TOKENIZER_NOT_CHECKED = Rule("TL-PRE-TOKENIZER-NOT-CHECKED", Level.NOT_CHECKED, "tokenizer",
                                    "The tokenizer checks could not run")
TL_PRE_NO_EXAMPLES = Rule("TL-PRE-NO-EXAMPLES", Level.NOT_CHECKED, "dataset-lines", "No example could be read")

RULES = (TP_PRE_MALFORMED, TL_PRE_NO_TEXT, TL_PRE_EMPTY, TL_PRE_CHAT, TL_PRE_DUPLICATE, TL_PRE_LEAKAGE,
         TL_PRE_TOO_LONG, TL_PRE_NO_EOS, TP_PRE_NO_EOS_APPEND, TL_PRE_NO_PAD, TL_PRE_PAD_IS_EOS, TP_TOK_HIGH_OOV,
         TL_PRE_TOKENIZER_NOT_CHECKED, TL_PRE_NO_EXAMPLES)

describe(*RULES, command="trainlint preflight", thresholds={TP_TOK_HIGH_OOV.id: ("max_oov_rate",)})
