"""The rules of ``trainlint preflight`` on speech/TTS corpora and of ``--tokenizer`` on their transcripts.

Only the rule objects live here (the registry loads them at start-up); the checks are in
:mod:`trainlint.rules.speech_checks`, which only ``preflight`` imports. IDs are trainproof 0.22.0's where the
meaning is the same (its ``data`` and ``tokenizer`` commands), ``TL-*`` where it is not.
"""

from __future__ import annotations

from .base import Level, Rule
from .registry import describe

TL_DATA_BAD_RECORD = Rule("TL-DATA-BAD-RECORD", Level.FAIL, "speech-manifest",
                          "A manifest line is not a record (not JSON, no audio path, no text)")
TP_DATA_MISSING_AUDIO = Rule("TP-DATA-MISSING-AUDIO", Level.FAIL, "speech-audio",
                             "A manifest line names an audio file that does not exist")
TP_DATA_UNREADABLE_AUDIO = Rule("TP-DATA-UNREADABLE-AUDIO", Level.WARN, "speech-audio",
                                "An audio file cannot be decoded, is empty or is cut short")
TL_DATA_AUDIO_NOT_CHECKED = Rule("TL-DATA-AUDIO-NOT-CHECKED", Level.NOT_CHECKED, "speech-audio",
                                 "Audio files were not read (a library is missing)")
TP_DATA_INCONSISTENT_SR = Rule("TP-DATA-INCONSISTENT-SR", Level.FAIL, "speech-corpus",
                               "An audio file's sample rate differs from the corpus's")
TP_DATA_INCONSISTENT_CHANNELS = Rule("TP-DATA-INCONSISTENT-CHANNELS", Level.FAIL, "speech-corpus",
                                     "An audio file's channel count differs from the corpus's")
TP_DATA_DURATION_SHORT = Rule("TP-DATA-DURATION-SHORT", Level.WARN, "speech-audio", "An audio file is very short")
TP_DATA_DURATION_LONG = Rule("TP-DATA-DURATION-LONG", Level.WARN, "speech-audio", "An audio file is very long")
TP_DATA_CHAR_RATE_OUTLIER = Rule("TP-DATA-CHAR-RATE-OUTLIER", Level.WARN, "speech-corpus",
                                 "Transcript length against duration is far from the corpus's rate")
TP_DATA_EMPTY_TRANSCRIPT = Rule("TP-DATA-EMPTY-TRANSCRIPT", Level.WARN, "speech-text", "A transcript is empty")
TP_DATA_UNNORMALIZED = Rule("TP-DATA-UNNORMALIZED", Level.WARN, "speech-text",
                            "A transcript holds digits, dates or symbols a TTS front end reads badly")
TP_DATA_MIXED_SCRIPTS = Rule("TP-DATA-MIXED-SCRIPTS", Level.WARN, "speech-text",
                             "A transcript mixes writing systems")
TP_DATA_CLIPPING = Rule("TP-DATA-CLIPPING", Level.WARN, "speech-audio", "An audio file reaches full scale (clipping)")
TP_DATA_SILENCE = Rule("TP-DATA-SILENCE", Level.WARN, "speech-audio", "An audio file holds a long silence")
TP_DATA_DUPLICATES = Rule("TP-DATA-DUPLICATES", Level.WARN, "speech-corpus",
                          "An audio file is byte-identical to an earlier one")

TL_TOK_CHAR_COVERAGE = Rule("TL-TOK-CHAR-COVERAGE", Level.WARN, "tokenizer",
                            "Characters of the transcripts the tokenizer cannot represent")
TP_TOK_HIGH_TPS = Rule("TP-TOK-HIGH-TPS", Level.WARN, "tokenizer", "Too many tokens per second of audio")
TP_TOK_TPS_NOT_MEASURED = Rule("TP-TOK-TPS-NOT-MEASURED", Level.NOT_CHECKED, "tokenizer",
                               "Tokens per second not measured: no duration")
TL_TOK_CHAR_SPLIT = Rule("TL-TOK-CHAR-SPLIT", Level.WARN, "tokenizer",
                         "Words are split into single characters")

RULES = (TL_DATA_BAD_RECORD, TP_DATA_MISSING_AUDIO, TP_DATA_UNREADABLE_AUDIO, TL_DATA_AUDIO_NOT_CHECKED,
         TP_DATA_INCONSISTENT_SR, TP_DATA_INCONSISTENT_CHANNELS, TP_DATA_DURATION_SHORT, TP_DATA_DURATION_LONG,
         TP_DATA_CHAR_RATE_OUTLIER, TP_DATA_EMPTY_TRANSCRIPT, TP_DATA_UNNORMALIZED, TP_DATA_MIXED_SCRIPTS,
         TP_DATA_CLIPPING, TP_DATA_SILENCE, TP_DATA_DUPLICATES, TL_TOK_CHAR_COVERAGE, TP_TOK_HIGH_TPS,
         TP_TOK_TPS_NOT_MEASURED, TL_TOK_CHAR_SPLIT)

describe(*RULES, command="trainlint preflight")
